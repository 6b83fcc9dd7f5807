package docs_test

import (
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
	for _, name := range []string{"upgrading", "deploying", "webhooks", "migrating", "metrics", "multicluster", "changelog"} {
		topic, ok := byName[name]
		require.True(t, ok, "docs/%s.md is not embedded", name)
		assert.NotEmpty(t, topic.Title)
		assert.NotContains(t, topic.Title, "#")
		assert.Greater(t, len(topic.Text), 1000)
	}
	assert.Equal(t, "Upgrading an API: the life of a version", byName["upgrading"].Title)
}
