// Package docs holds opgen's manuals, the Markdown files of this
// directory, embedded in the opgen binary: `opgen help <topic>` prints
// them. A message in a user's project names a topic, such as
// `go tool opgen help upgrading`, and gets the manual of the opgen the
// project uses, without a path into opgen's repository.
package docs

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed *.md
var files embed.FS

// Topic is one manual.
type Topic struct {
	// Name is the file's name without .md: what `opgen help` takes.
	Name string
	// Title is the manual's first heading.
	Title string
	// Text is the whole manual, in Markdown.
	Text string
}

// Topics returns every manual, by name.
func Topics() []Topic {
	names, _ := fs.Glob(files, "*.md")
	out := make([]Topic, 0, len(names))
	for _, n := range names {
		data, _ := files.ReadFile(n)
		text := string(data)
		title, _, _ := strings.Cut(text, "\n")
		out = append(out, Topic{Name: strings.TrimSuffix(n, ".md"), Title: strings.TrimPrefix(title, "# "), Text: text})
	}
	return out
}
