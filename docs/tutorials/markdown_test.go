package tutorials_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// block is one fenced block of a tutorial, or one of its headings and
// comments that the harness acts on.
type block struct {
	line     int
	lang     string
	file     string // for file blocks
	body     []string
	waitFor  string
	skip     string
	check    string // for check comments
	commands []command
	// heading is the text of a "## " heading: the start of a step.
	heading string
	// timeLimit, from <!-- time-limit: D -->, bounds the step it is in.
	timeLimit time.Duration
}

// command is one "$ " line of a console block and the output the
// tutorial shows under it.
type command struct {
	line   int
	text   string
	output []string
}

var fileInfo = regexp.MustCompile(`^(\w+)\s+file=(\S+)$`)

// comment returns the value of the comment <!-- name: VALUE --> on line.
func comment(line, name string) (string, bool) {
	v, ok := strings.CutPrefix(line, "<!-- "+name+": ")
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(v, " -->"), true
}

func parse(t *testing.T, path string) []block {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var (
		blocks        []block
		cur           *block
		waitFor, skip string
	)
	for i, line := range strings.Split(string(data), "\n") {
		if cur != nil {
			if line == "```" {
				blocks = append(blocks, *cur)
				cur = nil
				continue
			}
			cur.add(i+1, line)
			continue
		}
		if v, ok := comment(line, "wait-for"); ok {
			waitFor = v
		} else if v, ok := comment(line, "skip"); ok {
			skip = v
		} else if v, ok := comment(line, "check"); ok {
			blocks = append(blocks, block{line: i + 1, check: v})
		} else if v, ok := comment(line, "time-limit"); ok {
			d, err := time.ParseDuration(v)
			require.NoError(t, err, "%s line %d: time-limit takes a Go duration", path, i+1)
			blocks = append(blocks, block{line: i + 1, timeLimit: d})
		} else if h, ok := strings.CutPrefix(line, "## "); ok {
			blocks = append(blocks, block{line: i + 1, heading: h})
		} else if info, ok := strings.CutPrefix(line, "```"); ok {
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

// add adds line, the 1-based line n of the file, to b: to its body, and
// in a console block to its commands or to the last command's output.
func (b *block) add(n int, line string) {
	b.body = append(b.body, line)
	if b.lang != "console" {
		return
	}
	if c, ok := strings.CutPrefix(line, "$ "); ok {
		b.commands = append(b.commands, command{line: n, text: c})
	} else if len(b.commands) > 0 {
		last := &b.commands[len(b.commands)-1]
		last.output = append(last.output, line)
	}
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
