package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/docs"
)

// addTopics adds opgen's manuals (package docs) to root as help topics:
// `opgen help upgrading` prints docs/upgrading.md of this opgen, which
// is where opgen's messages send users. A manual named as a command is
// <name>-manual (opgen help generate-manual), so that the command keeps
// its name.
func addTopics(root *cobra.Command) {
	for _, t := range docs.Topics() {
		name := t.Name
		if c, _, err := root.Find([]string{name}); err == nil && c != root {
			name += "-manual"
		}
		root.AddCommand(&cobra.Command{
			Use:   name,
			Short: "Manual: " + t.Title,
			Long:  t.Text,
		})
	}
}
