package main

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpTopics: opgen help upgrading prints the manual that messages in
// users' projects name; a manual named as a command does not hide it.
func TestHelpTopics(t *testing.T) {
	help := func(args ...string) string {
		root := &cobra.Command{Use: "opgen"}
		for _, c := range commands {
			root.AddCommand(c())
		}
		addTopics(root)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(append([]string{"help"}, args...))
		require.NoError(t, root.Execute())
		return out.String()
	}
	assert.Contains(t, help("upgrading"), "# Upgrading an API: the life of a version\n")
	assert.Contains(t, help("generate"), "opgen generate [packages] [flags]", "the command keeps its name")
	assert.Contains(t, help("generate-manual"), "# opgen generate\n")
	assert.Contains(t, help(), "upgrading")
}
