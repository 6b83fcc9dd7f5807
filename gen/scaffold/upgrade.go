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

// OwnedFiles are the files of a project that opgen init writes and opgen
// upgrade may rewrite: opgen's build plumbing. The rest of what init
// writes (go.mod, main.go, README.md, .gitignore, internal/controller) is
// the user's from the start and never rewritten.
var OwnedFiles = []string{"Dockerfile", "Makefile", "generate.go"}

const opgenModule = "github.com/opgen-sdk/opgen"

// RenderOwned returns the owned files as the current templates write them
// for the project opts describes.
func RenderOwned(opts ProjectOptions) (map[string][]byte, error) {
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
// generate.go says scaffolded it ("opgen v0.3.0"), or "" when neither says:
// a project from before opgen recorded it.
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
