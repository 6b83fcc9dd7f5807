package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/markers"
)

// TestHelpTopics: opgen help upgrading prints the manual that messages in
// users' projects name; a manual named as a command does not hide it.
func TestHelpTopics(t *testing.T) {
	help := func(args ...string) string {
		root := newRootCommand()
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
	assert.Contains(t, help("hello-operator"), "# Tutorial: hello-operator\n")
	assert.Contains(t, help("todo-operator"), "# Tutorial: todo-operator\n")
}

// TestRootHelpSeparatesCommandsFromTopics: root help lists the commands
// first, under their group, and the manuals and tutorials apart.
func TestRootHelpSeparatesCommandsFromTopics(t *testing.T) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	require.NoError(t, root.Execute())
	commands, topics, ok := strings.Cut(out.String(), topicsTitle)
	require.True(t, ok, out.String())
	assert.Contains(t, commands, "Commands:\n")
	assert.NotContains(t, commands, "Available Commands:", "a command outside the group")
	for _, c := range []string{"generate ", "manifests ", "init ", "dev "} {
		assert.Contains(t, commands, "\n  "+c)
		assert.NotContains(t, topics, "opgen "+c)
	}
	for _, topic := range []string{"upgrading", "markers", "hello-operator", "todo-operator"} {
		assert.Contains(t, topics, "opgen "+topic+" ")
		assert.NotContains(t, commands, "\n  "+topic+" ")
	}
}

// TestMarkersTopic: generate --help is short and sends to opgen help
// markers, which documents every +opgen: marker, those a generator reads
// itself included.
func TestMarkersTopic(t *testing.T) {
	generate := newGenerateCommand().Long
	assert.Contains(t, generate, "opgen help markers")
	assert.NotContains(t, generate, "+opgen:controller:owns")
	assert.Less(t, strings.Count(generate, "\n"), 40)

	manual := markersHelp()
	for _, def := range markers.Definitions {
		if markers.Help(def) != nil {
			assert.Contains(t, manual, "\n  +"+def.Name+"\n")
		}
	}
	assert.Contains(t, manual, "\n  +"+markers.ConversionDrop+"\n")
	assert.Contains(t, manual, "\n  +"+markers.CompatAllow+"=")
}
