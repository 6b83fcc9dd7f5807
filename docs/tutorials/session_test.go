package tutorials_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Home is where the tutorials' outputs show the reader's files: the
// session's directory stands for it.
const home = "/home/you"

// session is the reader's shell: a directory, an environment and the
// commands left running in other terminals.
type session struct {
	t          *testing.T
	root       string // the reader's home: the directory the session starts in
	dir        string
	env        map[string]string
	checkout   string
	background []*exec.Cmd
	// checks are the Go checks of <!-- check: NAME --> comments.
	checks map[string]func(t *testing.T, dir string)
	steps  stepClock
}

func newSession(t *testing.T) *session {
	checkout, err := filepath.Abs("../..")
	require.NoError(t, err)
	bin := t.TempDir()
	root := t.TempDir()
	s := &session{t: t, root: root, dir: root, env: map[string]string{}, checkout: checkout}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		s.env[k] = v
	}
	delete(s.env, "OPGEN_REPLACE") // opgen init finds the clone it was built from
	s.env["PATH"] = bin + string(os.PathListSeparator) + s.env["PATH"]
	s.env["GOBIN"] = bin // go install puts opgen here, not in ~/go/bin
	s.env["GOFLAGS"] = ""
	s.env["GOWORK"] = "off"
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

// runDoc runs every block of the Markdown file at path, then checks the
// time its steps took.
func (s *session) runDoc(path string) {
	for _, b := range parse(s.t, path) {
		s.run(b)
	}
	s.steps.end(s.t, path)
}

func (s *session) run(b block) {
	t := s.t
	switch {
	case b.heading != "":
		s.steps.start(t, b.heading)
	case b.timeLimit != 0:
		s.steps.limit(b.timeLimit)
	case b.skip != "":
		t.Logf("line %d: skipped: %s", b.line, b.skip)
	case b.check != "":
		check, ok := s.checks[b.check]
		require.True(t, ok, "line %d: no check named %q", b.line, b.check)
		t.Logf("line %d: check %s", b.line, b.check)
		check(t, s.dir)
	case b.lang == "diff" && b.file != "":
		applyDiff(t, filepath.Join(s.dir, b.file), b)
	case b.file != "":
		path := filepath.Join(s.dir, b.file)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(b.body, "\n")+"\n"), 0o644))
	default:
		for _, c := range b.commands {
			s.command(b, c)
		}
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

// cloneOpgen is the clone of opgen a tutorial tells the reader to make.
var cloneOpgen = regexp.MustCompile(`^git clone https://github\.com/opgen-sdk/opgen(?:\.git)?(?: (\S+))?$`)

func (s *session) command(b block, c command) {
	t := s.t
	t.Logf("line %d: $ %s", c.line, c.text)
	switch {
	case strings.HasPrefix(c.text, "cd "):
		s.dir = filepath.Join(s.dir, strings.TrimSpace(strings.TrimPrefix(c.text, "cd ")))
	case strings.HasPrefix(c.text, "export "):
		k, v, _ := strings.Cut(strings.TrimPrefix(c.text, "export "), "=")
		s.env[k] = s.expand(v)
	case cloneOpgen.MatchString(c.text):
		// The clone is this checkout, as it is, uncommitted changes
		// included: the test checks the opgen it runs in.
		dest := cloneOpgen.FindStringSubmatch(c.text)[1]
		if dest == "" {
			dest = "opgen"
		}
		require.NoError(t, os.Symlink(s.checkout, filepath.Join(s.dir, dest)))
	case strings.HasSuffix(c.text, "# keeps running"):
		require.NotEmpty(t, b.waitFor, "line %d: a command that keeps running needs a <!-- wait-for: TEXT --> comment", b.line)
		s.start(c, b.waitFor)
	default:
		out := s.shell(c.text, s.dir, 10*time.Minute)
		s.compare(c, out)
	}
}

// compare fails the test, and goes on, when the output a tutorial shows
// under c is not what c printed (see normalize).
func (s *session) compare(c command, out string) {
	if len(c.output) == 0 {
		return
	}
	got := s.asShown(out)
	if !matches(normalize(strings.Join(c.output, "\n")), normalize(got)) {
		s.t.Errorf("line %d: $ %s\nshows:\n%s\nprinted:\n%s", c.line, c.text, strings.Join(c.output, "\n"), got)
		return
	}
	s.t.Logf("line %d: printed as shown:\n%s", c.line, got)
}

// asShown replaces in out the session's paths with those a reader has:
// the clone of opgen in ~/opgen, ~ being /home/you.
func (s *session) asShown(out string) string {
	userHome, _ := os.UserHomeDir()
	for _, p := range []struct{ from, to string }{{s.checkout, home + "/opgen"}, {s.root, home}, {userHome, home}} {
		if p.from != "" && p.from != "/" {
			out = strings.ReplaceAll(out, p.from, p.to)
		}
	}
	return out
}

func (s *session) expand(v string) string {
	cmd := exec.Command("bash", "-c", `printf %s "`+strings.Trim(v, `"`)+`"`)
	cmd.Dir, cmd.Env = s.dir, s.environ()
	out, err := cmd.Output()
	require.NoError(s.t, err, "expand %s", v)
	return string(out)
}

// shell runs c with bash in dir and returns its output, stdout and
// stderr as a terminal interleaves them.
func (s *session) shell(c, dir string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", c)
	cmd.Dir, cmd.Env = dir, s.environ()
	out, err := cmd.CombinedOutput()
	require.NoError(s.t, err, "$ %s\n%s", c, out)
	return string(out)
}

// start runs c in the background and waits until its output shows
// waitFor; then the output so far must be what the tutorial shows.
func (s *session) start(c command, waitFor string) {
	t := s.t
	text := strings.TrimSuffix(c.text, "# keeps running")
	cmd := exec.Command("bash", "-c", "exec "+text)
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
			t.Fatalf("$ %s exited (%v) before printing %q:\n%s", text, err, waitFor, out.String())
		case <-deadline:
			t.Fatalf("$ %s did not print %q in time:\n%s", text, waitFor, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	so, _, _ := strings.Cut(out.String(), waitFor)
	s.compare(c, so+lineOf(out.String()[len(so):]))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of $ %s:\n%s", text, tailLines(out.String(), 40))
		}
	})
}

// lineOf returns the first line of s.
func lineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// projectTests runs `go test ./...` in the project the tutorial leaves
// behind, as its reader would next.
func (s *session) projectTests() {
	s.t.Logf("the project's own tests: go test ./... in %s", s.dir)
	start := time.Now()
	s.shell("go test ./...", s.dir, 10*time.Minute)
	s.t.Logf("the project's tests passed in %v", time.Since(start).Round(100*time.Millisecond))
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

// stepClock times a tutorial's steps, its "## " sections.
type stepClock struct {
	name     string
	began    time.Time
	maxTime  time.Duration
	timings  []string
	overruns []string
}

// start ends the current step and starts the one named name.
func (c *stepClock) start(t *testing.T, name string) {
	c.stop()
	c.name, c.began, c.maxTime = name, time.Now(), 0
	t.Logf("step %s", name)
}

// limit bounds the current step's time.
func (c *stepClock) limit(d time.Duration) { c.maxTime = d }

func (c *stepClock) stop() {
	if c.name == "" {
		return
	}
	took := time.Since(c.began)
	c.timings = append(c.timings, fmt.Sprintf("%-50s %6.1fs", c.name, took.Seconds()))
	if c.maxTime > 0 && took > c.maxTime {
		c.overruns = append(c.overruns, fmt.Sprintf("step %q took %v, more than the %v its time-limit allows", c.name, took.Round(100*time.Millisecond), c.maxTime))
	}
	c.name = ""
}

// end ends the last step of doc, logs every step's time and fails the
// test for each step over its limit.
func (c *stepClock) end(t *testing.T, doc string) {
	c.stop()
	t.Logf("step timings of %s:\n%s", doc, strings.Join(c.timings, "\n"))
	for _, o := range c.overruns {
		t.Error(o)
	}
	*c = stepClock{}
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
