package scaffold

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/mod/modfile"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/dockerfile"
)

// UpgradeFile is a file of the scaffold of opgen init that opgen upgrade
// merges with the templates of a newer opgen.
type UpgradeFile struct {
	// Path is relative to the project root.
	Path string
	// Owned files are opgen's build plumbing (the Makefile, the
	// Dockerfile, generate.go, .gitignore): opgen upgrade merges them
	// unless it is given other files. The others (main.go, README.md) are
	// the user's from the start: merged only when named.
	Owned bool
	// Set files are sets of lines (.gitignore): the new template's lines
	// are added and those it dropped removed, in place; never a conflict.
	// The others merge three ways, line by line (Merge3).
	Set bool
}

// UpgradeFiles are the files opgen upgrade merges. go.mod is go get's,
// internal/ and apis/ are the user's, and never merged.
var UpgradeFiles = []UpgradeFile{
	{Path: "Makefile", Owned: true},
	{Path: "Dockerfile", Owned: true},
	{Path: "generate.go", Owned: true},
	{Path: ".gitignore", Owned: true, Set: true},
	{Path: "main.go"},
	{Path: "README.md"},
}

// OwnedFiles are the paths of the owned UpgradeFiles.
func OwnedFiles() []string {
	var out []string
	for _, f := range UpgradeFiles {
		if f.Owned {
			out = append(out, f.Path)
		}
	}
	return out
}

// UpgradeFileOf returns the UpgradeFile of path.
func UpgradeFileOf(path string) (UpgradeFile, bool) {
	for _, f := range UpgradeFiles {
		if f.Path == path {
			return f, true
		}
	}
	return UpgradeFile{}, false
}

const opgenModule = "github.com/opgen-sdk/opgen"

// gitignore is the .gitignore opgen init writes.
const gitignore = "/bin/\n/.kube/\n"

// RenderFiles returns the UpgradeFiles as the current templates write
// them for the project opts describes.
func RenderFiles(opts ProjectOptions) (map[string][]byte, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	docker, err := dockerfile.Build(dockerfile.Options{})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"Dockerfile":  docker,
		"Makefile":    renderText(makefileTemplate, opts),
		"generate.go": render(generateTemplate, opts),
		"main.go":     render(mainTemplate, opts),
		"README.md":   renderText(readmeTemplate, opts),
		".gitignore":  []byte(gitignore),
	}, nil
}

var (
	nameFlag     = regexp.MustCompile(`(?m)^//go:generate .*opgen generate .*--name[= ](\S+)`)
	makefileName = regexp.MustCompile(`(?m)^NAME :?= *(\S+)`)
	scaffolded   = regexp.MustCompile(`(?m)^(?:#|//) Scaffolded by (.+?)[.]?(?: \(|$)`)
)

// ReadProject returns the options an existing project was scaffolded
// with: the module, the opgen it requires or replaces (go.mod) and the
// operator name (the --name of generate.go's go:generate line, else the
// Makefile's NAME, else the name derived from the module path).
func ReadProject(dir string) (ProjectOptions, error) {
	path := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return ProjectOptions{}, fmt.Errorf("%w: run opgen upgrade in the project's root, beside go.mod", err)
	}
	mod, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		return ProjectOptions{}, err
	}
	if mod.Module == nil {
		return ProjectOptions{}, fmt.Errorf("%s: no module line", path)
	}
	opts := ProjectOptions{Module: mod.Module.Mod.Path}
	for _, r := range mod.Require {
		if r.Mod.Path == opgenModule {
			opts.OpgenVersion = r.Mod.Version
		}
	}
	for _, r := range mod.Replace {
		if r.Old.Path == opgenModule && r.New.Version == "" {
			opts.Replace = r.New.Path
		}
	}
	if opts.OpgenVersion == "" && opts.Replace == "" {
		return opts, errors.New(path + ": requires no github.com/opgen-sdk/opgen: is this an opgen project?")
	}
	opts.Name = firstMatch(dir, "generate.go", nameFlag)
	if opts.Name == "" {
		opts.Name = firstMatch(dir, "Makefile", makefileName)
	}
	if opts.Name == "" {
		opts.Name = gen.NameOf(opts.Module)
	}
	return opts, nil
}

// ScaffoldedBy returns the opgen that the project's Makefile or
// generate.go says scaffolded it ("opgen v0.3.0", "a development build
// of opgen"), or "" when neither says: a project from before opgen
// recorded it. opgen upgrade writes the line again with the opgen that
// upgraded: the base of the next upgrade.
func ScaffoldedBy(dir string) string {
	if s := firstMatch(dir, "Makefile", scaffolded); s != "" {
		return s
	}
	return firstMatch(dir, "generate.go", scaffolded)
}

func firstMatch(dir, file string, re *regexp.Regexp) string {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return ""
	}
	if m := re.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}
