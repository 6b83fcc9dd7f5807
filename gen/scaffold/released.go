package scaffold

import (
	"bytes"
	"embed"
	"go/format"
	"io/fs"
	"path"
	"text/template"

	"golang.org/x/mod/semver"
)

// released holds, for each release of opgen since v0.1.0, the templates
// of the files opgen upgrade merges, as that release wrote them
// (released/<version>/: Makefile.tmpl, generate.go.tmpl, main.go.tmpl,
// README.md.tmpl, and Dockerfile and gitignore as they were). They are
// the base of the three-way merge of a project that release scaffolded.
//
// The binary keeps them, rather than the project or the module cache:
// the project then holds nothing but its own files, the base is the same
// on every machine and offline, and a few kilobytes a release cost
// nothing. A project's files name the release that scaffolded it (the
// "Scaffolded by" line), and opgen upgrade renders that release's
// templates with the project's module and name.
//
//go:embed released
var released embed.FS

// releasedName maps the names of project.go's templates to their files
// in released/<version>.
var releasedName = map[string]string{
	"Makefile":    "Makefile.tmpl",
	"generate.go": "generate.go.tmpl",
	"main.go":     "main.go.tmpl",
	"README.md":   "README.md.tmpl",
}

// ReleasedVersions are the releases whose templates this opgen keeps,
// oldest first.
func ReleasedVersions() []string {
	entries, _ := fs.ReadDir(released, "released")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	semver.Sort(out)
	return out
}

// RenderRelease returns the UpgradeFiles as opgen v wrote them for the
// project opts describes, or false when this opgen keeps no templates of
// v.
func RenderRelease(v string, opts ProjectOptions) (map[string][]byte, bool) {
	dir := path.Join("released", v)
	if _, err := fs.Stat(released, dir); err != nil {
		return nil, false
	}
	opts.OpgenVersion, opts.Replace = v, ""
	if opts.validate() != nil {
		return nil, false
	}
	out := map[string][]byte{}
	for name, file := range releasedName {
		text, err := fs.ReadFile(released, path.Join(dir, file))
		if err != nil {
			return nil, false
		}
		out[name] = renderReleased(name, string(text), opts)
	}
	for name, file := range map[string]string{"Dockerfile": "Dockerfile", ".gitignore": "gitignore"} {
		data, err := fs.ReadFile(released, path.Join(dir, file))
		if err != nil {
			return nil, false
		}
		out[name] = data
	}
	return out, true
}

// renderReleased executes a kept template as its release did: Go files
// gofmt'd. A template that no longer executes with today's options
// renders as its text, and TestReleasedTemplatesRender fails.
func renderReleased(name, text string, opts ProjectOptions) []byte {
	t, err := template.New(name).Parse(text)
	var b bytes.Buffer
	if err != nil || t.Execute(&b, opts) != nil {
		return []byte(text)
	}
	out := b.Bytes()
	if path.Ext(name) == ".go" {
		if src, err := format.Source(out); err == nil {
			return src
		}
	}
	return out
}
