package tutorials_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tutorial's output is a real run's; these rules make two runs compare
// equal. Each pattern stands for what differs from run to run or from
// machine to machine, and both the shown and the real output go through
// them, in order.
var variable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\x1b\[[0-9;]*m`), ""},
	{regexp.MustCompile(`\bgo1\.\d+(\.\d+)?\b`), "go1.N"},
	{regexp.MustCompile(`\b(linux|darwin|windows|freebsd)/(amd64|arm64|arm|386)\b`), "OS/ARCH"},
	{regexp.MustCompile(`\bv\d+\.\d+\.\d+-(\d+\.)?(0\.)?\d{14}-[0-9a-f]{12}(\+dirty)?`), "PSEUDO-VERSION"},
	{regexp.MustCompile(`sha256:[0-9a-f]{64}`), "sha256:DIGEST"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "TIME"},
	{regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b`), "IP"},
	{regexp.MustCompile(`\blocalhost:\d+\b`), "IP"},
	// Durations and ages: 2.1s, 45ms, 3m12s, 5d.
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h|d|y)(\d+(\.\d+)?(ns|µs|us|ms|s|m|h))*\b`), "DURATION"},
	// The random suffixes of generateName and of ReplicaSets and Pods.
	{regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5}\b`), "-XXXXX"},
	{regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{8,10}-`), "-HASH-"},
	// kubectl aligns columns to the widest cell, which varies with the
	// values above.
	{regexp.MustCompile(`[ \t]+`), " "},
}

// normalize returns text's lines, each with the variable parts replaced
// and trailing blanks removed, without trailing empty lines, and without
// the go command's "go: downloading" lines, which show only where the
// module cache lacks a module.
func normalize(text string) []string {
	for _, v := range variable {
		text = v.re.ReplaceAllString(text, v.with)
	}
	var lines []string
	for l := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		if !strings.HasPrefix(l, "go: downloading ") {
			lines = append(lines, strings.TrimRight(l, " "))
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// matches reports whether got's lines are want's, where a want line
// "..." stands for any number of lines.
func matches(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matches(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matches(want[1:], got[1:])
}

// TestNormalizeAndMatch: the rules that make two runs compare equal keep
// apart what a reader would see as different.
func TestNormalizeAndMatch(t *testing.T) {
	same := func(shown, real string) bool { return matches(normalize(shown), normalize(real)) }
	assert.True(t, same(`3s          Normal   StorageMigrated   customresourcedefinition/todos.todo.example.com   every object is stored as v1 (rewrite, 2 objects written, 2.1s)`,
		`12s         Normal   StorageMigrated   customresourcedefinition/todos.todo.example.com   every object is stored as v1 (rewrite, 2 objects written, 35ms)`))
	assert.False(t, same("every object is stored as v1 (rewrite, 2 objects written, 2.1s)", "every object is stored as v1 (StorageVersionMigration, 0 objects written, 2.1s)"))
	assert.True(t, same("example.com/hello-operator (devel) go1.26.8 linux/amd64", "example.com/hello-operator (devel) go1.26.9 darwin/arm64"))
	assert.True(t, same("service/hello ClusterIP 10.0.0.97 <none> 5000/TCP 3s", "service/hello   ClusterIP   10.0.0.213   <none>   5000/TCP   10s"))
	assert.False(t, same("service/hello ClusterIP 10.0.0.97 <none> 5000/TCP 3s", "service/hello ClusterIP 10.0.0.97 <none> 8080/TCP 3s"))
	assert.True(t, same("taxes Pending 2020-04-15T00:00:00Z true", "taxes Pending 2026-11-29T23:40:12Z true"))
	assert.True(t, same("a\n...\nz", "a\nb\nc\nz"))
	assert.True(t, same("a\n...\nz", "a\nz\n"))
	assert.False(t, same("a\n...\nz", "a\nb"))
	assert.False(t, same("created go.mod", "created go.mod\ncreated main.go"), "a line more is a difference")
	assert.True(t, same("pod/hello-5d4f8c7b9-x2k4p", "pod/hello-7f9b6c8d44-q8zrv"))
	assert.True(t, same("adopted guestbook", "go: downloading github.com/onsi/gomega v1.44.0\nadopted guestbook"), "what the module cache lacked is not output")
}

// TestStepClock: a step over its time limit fails the test, by name.
func TestStepClock(t *testing.T) {
	var c stepClock
	c.start(t, "7. Make v1 the only stored version")
	c.limit(time.Nanosecond)
	time.Sleep(time.Millisecond)
	c.start(t, "8. Next")
	c.stop()
	assert.Len(t, c.timings, 2)
	require.Len(t, c.overruns, 1)
	assert.Contains(t, c.overruns[0], `step "7. Make v1 the only stored version" took`)
}
