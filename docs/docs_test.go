package docs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/docs"
)

// TestTopics: every manual a message points users at is embedded, with
// its title.
func TestTopics(t *testing.T) {
	byName := map[string]docs.Topic{}
	for _, topic := range docs.Topics() {
		byName[topic.Name] = topic
	}
	for _, name := range []string{"upgrading", "deploying", "webhooks", "migrating", "metrics", "multicluster"} {
		topic, ok := byName[name]
		require.True(t, ok, "docs/%s.md is not embedded", name)
		assert.NotEmpty(t, topic.Title)
		assert.NotContains(t, topic.Title, "#")
		assert.Greater(t, len(topic.Text), 1000)
	}
	assert.Equal(t, "Upgrading an API: the life of a version", byName["upgrading"].Title)
	for _, name := range []string{"hello-operator", "todo-operator"} {
		topic, ok := byName[name]
		require.True(t, ok, "docs/tutorials/%s.md is not embedded", name)
		assert.True(t, topic.Tutorial)
		assert.Equal(t, "Tutorial: "+name, topic.Title)
	}
	assert.False(t, byName["upgrading"].Tutorial)
}

// TestNoGoGetOfOpgen: opgen is not on the module proxy, so no manual,
// help text or message tells a user to go get it; the install story is a
// clone, go install ./cmd/opgen and a go.mod that replaces the module.
func TestNoGoGetOfOpgen(t *testing.T) {
	goGet := regexp.MustCompile("go" + ` get .*opgen`) // split, or this line matches
	for _, root := range []string{".", "../README.md", "../cmd", "../gen"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a scratch directory another package's running test removed
			}
			if err == nil && d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // hidden: tests' scratch copies (.run-*), not text users read
			}
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go")) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(data), "\n") {
				assert.False(t, goGet.MatchString(line), "%s:%d tells users to fetch the unpublished opgen from the proxy: %s", path, i+1, line)
			}
			return nil
		})
		require.NoError(t, err)
	}
}
