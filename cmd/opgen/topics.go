package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/docs"
)

// commandsGroup is the group of root help's commands; the help topics
// are listed apart, under topicsTitle.
const (
	commandsGroup = "commands"
	topicsTitle   = "Manuals and tutorials (opgen help <topic>):"
)

// addTopics adds opgen's manuals (package docs), its tutorials and the
// marker manual to root as help topics, listed apart from the commands:
// `opgen help upgrading` prints docs/upgrading.md of this opgen, which is
// where opgen's messages send users; `opgen help hello-operator` the
// tutorial; `opgen help markers` every +opgen: marker. A manual named as
// a command is <name>-manual (opgen help generate-manual), so that the
// command keeps its name.
func addTopics(root *cobra.Command) {
	root.AddGroup(&cobra.Group{ID: commandsGroup, Title: "Commands:"})
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "Additional help topics:", topicsTitle, 1))
	for _, c := range root.Commands() {
		if c.GroupID == "" {
			c.GroupID = commandsGroup
		}
	}
	root.SetHelpCommandGroupID(commandsGroup)
	root.SetCompletionCommandGroupID(commandsGroup)
	root.AddCommand(&cobra.Command{
		Use:   "markers",
		Short: "Manual: opgen's markers (+opgen:controller, +opgen:webhook, ...)",
		Long:  markersHelp(),
	})
	for _, t := range docs.Topics() {
		name := t.Name
		if c, _, err := root.Find([]string{name}); err == nil && c != root {
			name += "-manual"
		}
		short := "Manual: " + t.Title
		if t.Tutorial {
			short = "Tutorial: " + strings.TrimPrefix(t.Title, "Tutorial: ")
		}
		root.AddCommand(&cobra.Command{Use: name, Short: short, Long: t.Text})
	}
}
