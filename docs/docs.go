// Package docs holds opgen's manuals, the Markdown files of this
// directory, embedded in the opgen binary: `opgen help <topic>` prints
// them. A message in a user's project names a topic, such as
// `go tool opgen help upgrading`, and gets the manual of the opgen the
// project uses, without a path into opgen's repository.
package docs

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

//go:embed *.md tutorials/*.md
var files embed.FS

// Topic is one manual.
type Topic struct {
	// Name is the file's name without .md: what `opgen help` takes.
	Name string
	// Title is the manual's first heading.
	Title string
	// Text is the whole manual, in Markdown.
	Text string
	// Tutorial says that it is a tutorial (docs/tutorials), not a manual.
	Tutorial bool
}

// Topics returns every manual, by name, then the tutorials
// (tutorials/hello-operator.md is the topic hello-operator).
func Topics() []Topic {
	manuals, _ := fs.Glob(files, "*.md")
	tutorials, _ := fs.Glob(files, "tutorials/*.md")
	out := make([]Topic, 0, len(manuals)+len(tutorials))
	for _, n := range append(manuals, tutorials...) {
		data, _ := files.ReadFile(n)
		text := string(data)
		title, _, _ := strings.Cut(text, "\n")
		out = append(out, Topic{Name: strings.TrimSuffix(path.Base(n), ".md"), Title: strings.TrimPrefix(title, "# "), Text: text, Tutorial: path.Dir(n) == "tutorials"})
	}
	return out
}
