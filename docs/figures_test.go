package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The user pages say what to do and what is guaranteed; the evidence
// (docs/evidence) says what was measured, when and where. A user page
// quotes measurements on one line only, which starts with measuredPrefix
// and links the evidence that holds them.
const measuredPrefix = "Measured:"

// Budgets of the user pages, in words as wc -w counts them.
const (
	userDocsWords    = 30000
	reliabilityWords = 2500
)

// userDocs are the pages a user reads: the README, the manuals and the
// tutorials. The evidence is left out.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages := []string{"../README.md"}
	for _, glob := range []string{"*.md", "tutorials/*.md"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		pages = append(pages, m...)
	}
	return pages
}

// line is one line of a page, outside fenced blocks.
type line struct {
	page string
	n    int
	text string
}

// proseLines are the lines of path outside fenced blocks.
func proseLines(t *testing.T, path string) []line {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []line
	fenced := false
	for i, text := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(text, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line{page: path, n: i + 1, text: text})
		}
	}
	return out
}

// figure is a number with a unit, or a ratio: 0.66x, 5.6 ms, 10–30x,
// 3,357 B, 1.5–2.6 s, 29.3%.
var figure = regexp.MustCompile(`\d+(?:,\d{3})*(?:\.\d+)?(?:[–-]\d+(?:,\d{3})*(?:\.\d+)?)?(?:x|\s?%|\s(?:ms|µs|ns|s|min|h|B|KB|MB|GB|KiB|MiB|GiB))`)

// figures are the figures of text, each standing alone: not part of a
// longer number or word (v0.25, 12ms3).
func figures(text string) []string {
	var out []string
	for _, loc := range figure.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && isWordish(rune(text[loc[0]-1])) {
			continue
		}
		if loc[1] < len(text) && isWordish(rune(text[loc[1]])) {
			continue
		}
		out = append(out, text[loc[0]:loc[1]])
	}
	return out
}

func isWordish(r rune) bool { return r == '.' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// linkTargets are the local files the Markdown links of text name,
// relative to the page's directory, anchors dropped.
func linkTargets(page, text string) []string {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		out = append(out, filepath.Join(filepath.Dir(page), target))
	}
	return out
}

// TestMeasuredFiguresAreInTheEvidence: every figure a Measured line
// quotes is in the evidence that line links, so that a new run cannot
// leave the page quoting an old one in silence.
func TestMeasuredFiguresAreInTheEvidence(t *testing.T) {
	for _, page := range userDocs(t) {
		for _, l := range proseLines(t, page) {
			if !strings.HasPrefix(l.text, measuredPrefix) {
				continue
			}
			targets := linkTargets(page, l.text)
			if !assert.NotEmpty(t, targets, "%s:%d: a Measured line links no evidence: link the docs/evidence page that holds its figures", page, l.n) {
				continue
			}
			var evidence strings.Builder
			for _, target := range targets {
				data, err := os.ReadFile(target)
				if !assert.NoError(t, err, "%s:%d: the Measured line links %s, which cannot be read", page, l.n, target) {
					continue
				}
				evidence.Write(data)
			}
			text := strings.ReplaceAll(evidence.String(), "\u00a0", " ")
			for _, f := range figures(mdLink.ReplaceAllString(l.text, "]")) {
				assert.True(t, strings.Contains(text, f),
					"%s:%d: the Measured line quotes %q, which the evidence it links (%s) does not hold: quote the figure the evidence has, or, after a new run, update the evidence first, naming the results file it comes from",
					page, l.n, f, strings.Join(targets, ", "))
			}
		}
	}
}

// TestOneMeasuredLinePerPage: a user page carries at most one Measured
// line; the rest of the measurements live in docs/evidence.
func TestOneMeasuredLinePerPage(t *testing.T) {
	for _, page := range userDocs(t) {
		var at []int
		for _, l := range proseLines(t, page) {
			if strings.HasPrefix(l.text, measuredPrefix) {
				at = append(at, l.n)
			}
		}
		assert.LessOrEqual(t, len(at), 1, "%s has Measured lines at %v: keep one, and move the other figures to docs/evidence", page, at)
	}
}

// machineFigure is how a page says on what machine, under what load,
// something was measured.
var machineFigure = regexp.MustCompile(`(?i)load average|\buptime\b|\b\d+[ -](?:shared |busy )?(?:v?cpus?|cores?)\b`)

// TestNoMachineFiguresInUserDocs: load averages and machine sizes are
// evidence; outside its Measured line a user page says what to do.
func TestNoMachineFiguresInUserDocs(t *testing.T) {
	for _, page := range userDocs(t) {
		for _, l := range proseLines(t, page) {
			if strings.HasPrefix(l.text, measuredPrefix) {
				continue
			}
			m := machineFigure.FindString(l.text)
			assert.Empty(t, m, "%s:%d: %q describes a machine or its load: move the measurement to docs/evidence and quote it, if at all, in the page's Measured line", page, l.n, m)
		}
	}
}

// TestUserDocsWordBudget keeps the user pages short enough to read: the
// README, the manuals and the tutorials within userDocsWords, and the
// reliability page, a list of guarantees, within reliabilityWords.
func TestUserDocsWordBudget(t *testing.T) {
	total := 0
	for _, page := range userDocs(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		words := len(strings.Fields(string(data)))
		total += words
		if filepath.Base(page) == "reliability.md" {
			assert.LessOrEqual(t, words, reliabilityWords, "docs/reliability.md has %d words: keep it to the guarantees and their tests; the runs go to docs/evidence/reliability.md", words)
		}
	}
	assert.LessOrEqual(t, total, userDocsWords, "the user pages have %d words: say what to do and what is guaranteed once, and move measurements to docs/evidence", total)
}

// TestRelativeLinksResolve: every relative link of the README and of the
// pages under docs/ names a file or directory that exists and, for a
// Markdown page, a heading it has.
func TestRelativeLinksResolve(t *testing.T) {
	pages := []string{"../README.md", "../CHANGELOG.md"}
	require.NoError(t, filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	}))
	anchors := map[string]map[string]bool{}
	for _, page := range pages {
		for _, l := range proseLines(t, page) {
			for _, m := range mdLink.FindAllStringSubmatch(stripCode(l.text), -1) {
				target, anchor, _ := strings.Cut(m[1], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path := page
				if target != "" {
					path = filepath.Join(filepath.Dir(page), target)
					if _, err := os.Stat(path); err != nil {
						assert.NoError(t, err, "%s:%d: the link %s names nothing", page, l.n, m[1])
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				if anchors[path] == nil {
					anchors[path] = headingAnchors(t, path)
				}
				assert.True(t, anchors[path][anchor], "%s:%d: the link %s names no heading of %s", page, l.n, m[1], path)
			}
		}
	}
}

// stripCode removes inline code spans, whose brackets are no links.
func stripCode(s string) string { return inlineCode.ReplaceAllString(s, "") }

var inlineCode = regexp.MustCompile("`[^`]*`")

// headingAnchors are the anchors GitHub makes of path's headings.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(t, path) {
		if !strings.HasPrefix(l.text, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l.text, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
