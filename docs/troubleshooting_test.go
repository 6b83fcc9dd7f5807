package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTroubleshootingMessagesAreTheCode: every message troubleshooting.md
// quotes (its text blocks) is one the code prints: each piece between
// the placeholders (<kind>), less the punctuation around them, occurs in
// a non-test Go source of opgen.
func TestTroubleshootingMessagesAreTheCode(t *testing.T) {
	doc, err := os.ReadFile("troubleshooting.md")
	require.NoError(t, err)
	messages := regexp.MustCompile("(?s)```text\n(.*?)\n```").FindAllStringSubmatch(string(doc), -1)
	require.GreaterOrEqual(t, len(messages), 10, "troubleshooting.md quotes fewer than 10 messages")
	sources := nonTestSources(t)
	placeholder := regexp.MustCompile(`"?<[^<>]*>"?`) // "<x>" is a %q
	for _, m := range messages {
		pieces := 0
		for _, piece := range placeholder.Split(m[1], -1) {
			// The punctuation around a placeholder may be another
			// literal's: "%s, %s (%s)".
			piece = strings.Trim(piece, " ,:;()[]?")
			if len(piece) < 8 {
				continue // too short to name one message: ": ", ") ["
			}
			pieces++
			assert.True(t, strings.Contains(sources, piece), "troubleshooting.md quotes a message the code no longer prints: %q is in no Go source; the message:\n%s", piece, m[1])
		}
		assert.Positive(t, pieces, "a quoted message with no text to check: %s", m[1])
	}
}

// nonTestSources is the text of opgen's Go files, tests left out.
func nonTestSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, root := range []string{"../pkg", "../gen", "../cmd", "../internal"} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			data, err := os.ReadFile(path)
			b.Write(data)
			return err
		}))
	}
	return b.String()
}
