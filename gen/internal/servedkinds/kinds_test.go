package servedkinds

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/gen/internal/servedkinds/internal/scheme"
)

// TestTableIsClientGos: the table is client-go's scheme; when client-go
// changes, run go generate ./gen/internal/servedkinds.
func TestTableIsClientGos(t *testing.T) {
	assert.Equal(t, scheme.Table(), table(), "the table is stale: run go generate ./gen/internal/servedkinds")
	kinds, ok := Kinds("apps", "v1")
	assert.True(t, ok)
	assert.Contains(t, kinds, "Deployment")
	_, ok = Kinds("example.com", "v1")
	assert.False(t, ok, "not a Kubernetes group")
}
