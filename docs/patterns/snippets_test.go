package patterns_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnippetsAreTheCode: every Go block of docs/patterns.md is a piece of
// this project's code, line for line, so that what the page shows is
// what the tests run.
func TestSnippetsAreTheCode(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../patterns.md")
	require.NoError(t, err)
	var code strings.Builder
	for _, glob := range []string{"*.go", "internal/controller/*.go", "apis/batch/v1/*.go"} {
		files, err := filepath.Glob(glob)
		require.NoError(t, err)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			code.Write(data)
		}
	}
	blocks := strings.Split(string(page), "```go\n")[1:]
	require.NotEmpty(t, blocks)
	for _, b := range blocks {
		snippet := b[:strings.Index(b, "```")]
		assert.Contains(t, code.String(), snippet, "a snippet of docs/patterns.md is not this project's code")
	}
}
