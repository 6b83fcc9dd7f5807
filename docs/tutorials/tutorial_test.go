// Package tutorials_test runs the tutorials: every command of a tutorial, in
// order, in a new directory, with opgen built from this checkout (and
// `opgen init` told to replace the opgen module with it). A tutorial passes
// only when all its commands succeed, and its last commands check that the
// operator works.
//
// The Markdown conventions it reads:
//
//   - In a ```console block, a line starting with "$ " is a command; the
//     lines after it are sample output and are not checked.
//   - A command ending in "# keeps running" starts in the background (the
//     reader's second terminal); the harness waits for the text of the
//     <!-- wait-for: TEXT --> comment just before its block to appear in its
//     output.
//   - ```lang file=PATH blocks are files the reader writes; the harness
//     writes them.
//   - <!-- skip: REASON --> before a block skips it, with the reason in the
//     test log.
//   - ```diff file=PATH blocks are edits the reader makes: each hunk's
//     context and removed lines are found in the file, once, and replaced
//     by its context and added lines (the @@ line numbers are not read).
//   - <!-- check: NAME --> runs the test's Go check of that name at that
//     point (a comparison the reader would make by eye).
//   - `cd` and `export` change the directory and environment of the
//     commands after them, as in a shell; `go install .../cmd/opgen@latest`
//     builds opgen from this checkout instead.
package tutorials_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// block is one fenced block of a tutorial.
type block struct {
	line     int
	lang     string
	file     string // for file blocks
	body     []string
	waitFor  string
	skip     string
	check    string // for check comments
	commands []string
}

var fileInfo = regexp.MustCompile(`^(\w+)\s+file=(\S+)$`)

func parse(t *testing.T, path string) []block {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var (
		blocks  []block
		cur     *block
		waitFor string
		skip    string
	)
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.body = append(cur.body, line)
			if cur.lang == "console" && strings.HasPrefix(line, "$ ") {
				cur.commands = append(cur.commands, strings.TrimPrefix(line, "$ "))
			}
		case strings.HasPrefix(line, "<!-- wait-for: "):
			waitFor = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- wait-for: "), " -->")
		case cur == nil && strings.HasPrefix(line, "<!-- check: "):
			blocks = append(blocks, block{line: i + 1, check: strings.TrimSuffix(strings.TrimPrefix(line, "<!-- check: "), " -->")})
		case strings.HasPrefix(line, "<!-- skip: "):
			skip = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- skip: "), " -->")
		case strings.HasPrefix(line, "```"):
			info := strings.TrimPrefix(line, "```")
			cur = &block{line: i + 1, lang: info, waitFor: waitFor, skip: skip}
			if m := fileInfo.FindStringSubmatch(info); m != nil {
				cur.lang, cur.file = m[1], m[2]
			}
			waitFor, skip = "", ""
		}
	}
	require.Nil(t, cur, "%s: unterminated code block", path)
	return blocks
}

// session is the reader's shell: a directory, an environment and the
// commands left running in other terminals.
type session struct {
	t          *testing.T
	dir        string
	env        map[string]string
	checkout   string
	background []*exec.Cmd
	// checks are the Go checks of <!-- check: NAME --> comments.
	checks map[string]func(t *testing.T, dir string)
}

func newSession(t *testing.T) *session {
	checkout, err := filepath.Abs("../..")
	require.NoError(t, err)
	bin := t.TempDir()
	s := &session{t: t, dir: t.TempDir(), env: map[string]string{}, checkout: checkout}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		s.env[k] = v
	}
	s.env["PATH"] = bin + string(os.PathListSeparator) + s.env["PATH"]
	s.env["OPGEN_REPLACE"] = checkout
	s.env["GOFLAGS"] = ""
	s.env["GOWORK"] = "off"
	s.env["OPGEN_TEST_BIN"] = bin
	t.Cleanup(s.stopBackground)
	return s
}

func (s *session) environ() []string {
	out := make([]string, 0, len(s.env))
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	return out
}

func (s *session) run(b block) {
	t := s.t
	if b.skip != "" {
		t.Logf("line %d: skipped: %s", b.line, b.skip)
		return
	}
	if b.check != "" {
		check, ok := s.checks[b.check]
		require.True(t, ok, "line %d: no check named %q", b.line, b.check)
		t.Logf("line %d: check %s", b.line, b.check)
		check(t, s.dir)
		return
	}
	if b.lang == "diff" && b.file != "" {
		applyDiff(t, filepath.Join(s.dir, b.file), b)
		return
	}
	if b.file != "" {
		path := filepath.Join(s.dir, b.file)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(b.body, "\n")+"\n"), 0o644))
		return
	}
	for _, c := range b.commands {
		s.command(b, c)
	}
}

// applyDiff applies the hunks of a diff block to the file at path.
func applyDiff(t *testing.T, path string, b block) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, "line %d", b.line)
	text := string(data)
	for _, h := range hunks(b.body) {
		require.Equal(t, 1, strings.Count(text, h.old), "line %d: the hunk's context and removed lines must be in %s exactly once:\n%s", b.line, b.file, h.old)
		text = strings.Replace(text, h.old, h.new, 1)
	}
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// hunk is one hunk of a diff, as the text it finds and what replaces it.
type hunk struct{ old, new string }

// hunks splits a diff's lines into hunks at their @@ lines.
func hunks(lines []string) []hunk {
	var out []hunk
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			out = append(out, hunk{})
		case len(out) == 0:
		case strings.HasPrefix(l, "-"):
			out[len(out)-1].old += l[1:] + "\n"
		case strings.HasPrefix(l, "+"):
			out[len(out)-1].new += l[1:] + "\n"
		default:
			ctx := strings.TrimPrefix(l, " ") + "\n"
			out[len(out)-1].old += ctx
			out[len(out)-1].new += ctx
		}
	}
	return out
}

func (s *session) command(b block, c string) {
	t := s.t
	t.Logf("line %d: $ %s", b.line, c)
	switch {
	case strings.HasPrefix(c, "cd "):
		s.dir = filepath.Join(s.dir, strings.TrimSpace(strings.TrimPrefix(c, "cd ")))
	case strings.HasPrefix(c, "export "):
		k, v, _ := strings.Cut(strings.TrimPrefix(c, "export "), "=")
		s.env[k] = s.expand(v)
	case strings.HasPrefix(c, "go install github.com/opgen-sdk/opgen/cmd/opgen@"):
		s.shell(fmt.Sprintf("go build -o %q ./cmd/opgen", filepath.Join(s.env["OPGEN_TEST_BIN"], "opgen")), s.checkout, 5*time.Minute)
	case strings.HasSuffix(c, "# keeps running"):
		require.NotEmpty(t, b.waitFor, "line %d: a command that keeps running needs a <!-- wait-for: TEXT --> comment", b.line)
		s.start(strings.TrimSuffix(c, "# keeps running"), b.waitFor)
	default:
		s.shell(c, s.dir, 10*time.Minute)
	}
}

func (s *session) expand(v string) string {
	cmd := exec.Command("bash", "-c", `printf %s "`+strings.Trim(v, `"`)+`"`)
	cmd.Dir, cmd.Env = s.dir, s.environ()
	out, err := cmd.Output()
	require.NoError(s.t, err, "expand %s", v)
	return string(out)
}

func (s *session) shell(c, dir string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", c)
	cmd.Dir, cmd.Env = dir, s.environ()
	out, err := cmd.CombinedOutput()
	require.NoError(s.t, err, "$ %s\n%s", c, out)
}

// start runs c in the background and waits until its output shows
// waitFor.
func (s *session) start(c, waitFor string) {
	t := s.t
	cmd := exec.Command("bash", "-c", "exec "+c)
	cmd.Dir, cmd.Env = s.dir, s.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	s.background = append(s.background, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(15 * time.Minute) // the first opgen dev builds the control plane
	for !strings.Contains(out.String(), waitFor) {
		select {
		case err := <-exited:
			t.Fatalf("$ %s exited (%v) before printing %q:\n%s", c, err, waitFor, out.String())
		case <-deadline:
			t.Fatalf("$ %s did not print %q in time:\n%s", c, waitFor, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of $ %s:\n%s", c, tailLines(out.String(), 40))
		}
	})
}

// stopBackground interrupts the background commands, newest first, as the
// reader's Ctrl-C would, and kills what is left after 30 seconds.
func (s *session) stopBackground() {
	for i := len(s.background) - 1; i >= 0; i-- {
		cmd := s.background[i]
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGINT)
		done := make(chan struct{})
		go func() {
			for syscall.Kill(-pgid, 0) == nil {
				time.Sleep(50 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tailLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func TestHelloOperatorTutorial(t *testing.T) {
	s := newSession(t)
	for _, b := range parse(t, "hello-operator.md") {
		s.run(b)
	}
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

func TestTodoOperatorTutorial(t *testing.T) {
	s := newSession(t)
	for _, b := range parse(t, "todo-operator.md") {
		s.run(b)
	}
}
