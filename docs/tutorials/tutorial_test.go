// Package tutorials_test runs the tutorials: every command of a tutorial, in
// order, in a new directory, with opgen built from this checkout as the
// tutorial tells a reader to build it from a clone. A tutorial passes only
// when all its commands succeed, every output it shows is the one its
// command printed, its steps keep their time limits, and the project it
// leaves behind passes its own tests.
//
// The Markdown conventions it reads:
//
//   - In a ```console block, a line starting with "$ " is a command; the
//     lines after it, up to the next command, are its output as shown. The
//     real output must be the same, but for what differs between runs and
//     machines (times, durations, addresses, generated names, digests, Go
//     versions, column padding: see normalize) and the reader's paths: the
//     session's directory is /home/you, the clone ~/opgen. A shown line
//     "..." stands for any number of lines. A command shown without output
//     is not compared.
//   - A command ending in "# keeps running" starts in the background (the
//     reader's second terminal); the harness waits for the text of the
//     <!-- wait-for: TEXT --> comment just before its block to appear in its
//     output, and compares the output up to that line.
//   - ```lang file=PATH blocks are files the reader writes; the harness
//     writes them.
//   - <!-- skip: REASON --> before a block skips it, with the reason in the
//     test log.
//   - ```diff file=PATH blocks are edits the reader makes: each hunk's
//     context and removed lines are found in the file, once, and replaced
//     by its context and added lines (the @@ line numbers are not read).
//   - <!-- check: NAME --> runs the test's Go check of that name at that
//     point (a comparison the reader would make by eye).
//   - A "## " heading starts a step; the test logs each step's time.
//     <!-- time-limit: 20s --> in a step fails the test when the step
//     takes longer.
//   - `cd` and `export` change the directory and environment of the
//     commands after them, as in a shell; `git clone
//     https://github.com/opgen-sdk/opgen [DIR]` links DIR to this checkout,
//     uncommitted changes included, instead of cloning.
package tutorials_test

import (
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelloOperatorTutorial runs docs/tutorials/hello-operator.md, then the
// tests of the project it leaves behind.
func TestHelloOperatorTutorial(t *testing.T) {
	s := newSession(t)
	s.runDoc("hello-operator.md")
	s.projectTests()
}

// TestTutorialCodeMatchesTheExample keeps the tutorial's files gofmt-clean
// and the same code as the tested example's, apart from the module path.
func TestTutorialCodeMatchesTheExample(t *testing.T) {
	for _, tc := range []struct{ doc, example, module string }{
		{"hello-operator.md", "../../examples/hello-operator", "example.com/hello-operator"},
		{"todo-operator.md", "../../examples/todo-operator", "example.com/todo-operator"},
	} {
		for _, b := range parse(t, tc.doc) {
			if b.lang != "go" || b.file == "" {
				continue
			}
			want, err := os.ReadFile(filepath.Join(tc.example, b.file))
			require.NoError(t, err, "%s line %d: the example has no %s", tc.doc, b.line, b.file)
			code := strings.Join(b.body, "\n") + "\n"
			formatted, err := format.Source([]byte(code))
			require.NoError(t, err, "%s line %d: %s does not parse", tc.doc, b.line, b.file)
			assert.Equal(t, string(formatted), code, "%s line %d: %s is not gofmt-clean", tc.doc, b.line, b.file)
			// The module path sorts differently from the example's, so
			// gofmt orders the imports again after replacing it.
			got, err := format.Source([]byte(strings.ReplaceAll(code, tc.module, "github.com/opgen-sdk/opgen/examples/"+strings.TrimPrefix(tc.module, "example.com/"))))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "%s line %d: %s differs from the example's", tc.doc, b.line, b.file)
		}
	}
}

// TestTodoOperatorTutorial runs docs/tutorials/todo-operator.md and the
// tests of the project it leaves behind. Then, on that project and its
// running cluster and operator, it walks docs/upgrading.md: deprecate
// v1alpha1, stop serving it, remove it, generating, building and
// releasing at each step, as the tutorial's last words invite.
func TestTodoOperatorTutorial(t *testing.T) {
	s := newSession(t)
	s.runDoc("todo-operator.md")
	s.projectTests()
	s.runDoc("../upgrading.md")
}
