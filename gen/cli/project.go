package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/gen/scaffold"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

// Init scaffolds a new operator project in dir (scaffold.InitProject),
// then runs go mod tidy and the generators. It lists the files it created
// on out, and the go command's output on errOut.
//
// An opgen built from a checkout has no version the module proxy serves:
// the project's go.mod replaces opgen with that checkout, unless
// opts.Replace names another.
func Init(ctx context.Context, dir string, opts scaffold.ProjectOptions, out, errOut io.Writer) error {
	if v := BuildVersion(); v != "(devel)" {
		opts.OpgenVersion = v
	}
	replace, fromCheckout := replaceOrCheckout(opts.Replace)
	if replace != "" {
		var err error
		if opts.Replace, err = filepath.Abs(replace); err != nil {
			return err
		}
	}
	created, err := scaffold.InitProject(dir, opts)
	if err != nil {
		return err
	}
	listCreated(out, dir, created.Files)
	if fromCheckout {
		fmt.Fprintf(out, "go.mod: replace %s => %s, the checkout this opgen was built from (--replace names another)\n", opgenModule, opts.Replace)
	}
	if err := goModTidy(ctx, dir, errOut); err != nil {
		return err
	}
	if _, err := gen.Run(ctx, gen.Options{Root: dir, Version: BuildVersion()}, generators.All()); err != nil {
		return err
	}
	for _, n := range created.Notes {
		fmt.Fprintf(out, "%s\n", n)
	}
	return nil
}

func goModTidy(ctx context.Context, dir string, errOut io.Writer) error {
	tidy := exec.CommandContext(ctx, "go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Stdout, tidy.Stderr = errOut, errOut
	if err := tidy.Run(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %w", dir, err)
	}
	return nil
}

// CreateAPI scaffolds a kind, or a version of a kind, in the project at
// root (scaffold.CreateAPI), lists what it created on out, and adds to
// go.mod what the new files import.
func CreateAPI(ctx context.Context, root, controllerDir string, opts scaffold.APIOptions, out io.Writer) error {
	p, err := gen.NewProject(gen.Options{Root: root, ControllerDir: controllerDir, Patterns: []string{"."}})
	if err != nil {
		return err
	}
	created, err := scaffold.CreateAPI(p, opts)
	if err != nil {
		return err
	}
	listCreated(out, root, created.Files)
	for _, n := range created.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	return requireImports(ctx, p.ModuleDir)
}

// listCreated prints the files created, relative to dir.
func listCreated(out io.Writer, dir string, files []string) {
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(out, "created %s\n", rel)
	}
}

// requireImports adds to go.mod the modules the new files import through
// opgen (the scaffolded test's pkg/optest needs more than main.go's
// pkg/runtime does), so that go generate and go test run at once. The
// generated packages the files import do not exist before go generate:
// -e lets tidy add the rest all the same.
func requireImports(ctx context.Context, moduleDir string) error {
	tidy := exec.CommandContext(ctx, "go", "mod", "tidy", "-e")
	tidy.Dir = moduleDir
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy -e in %s: %w\n%s", moduleDir, err, out)
	}
	return nil
}

// Upgrade renders again the scaffold files opgen owns (scaffold.OwnedFiles,
// or those of files) for the project in dir, prints the diff of each that
// would change on out, and writes them with write.
func Upgrade(dir string, files []string, write bool, out io.Writer) error {
	opts, err := scaffold.ReadProject(dir)
	if err != nil {
		return err
	}
	before := scaffold.ScaffoldedBy(dir)
	if before == "" {
		before = "an opgen from before the scaffold recorded its version"
	}
	with := "this opgen's templates (a development build), recording the opgen go.mod requires"
	if v := BuildVersion(); v != "" && v != "(devel)" {
		opts.OpgenVersion = v
		with = "the templates of opgen " + v
	}
	rendered, err := scaffold.RenderOwned(opts)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = scaffold.OwnedFiles
	}
	fmt.Fprintf(out, "project %s (%s), scaffolded by %s; rendering with %s\n", opts.Name, opts.Module, before, with)
	var changed []string
	for _, f := range files {
		differs, err := upgradeFile(dir, f, rendered[f], write, out)
		if err != nil {
			return err
		}
		if differs {
			changed = append(changed, f)
		}
	}
	switch {
	case len(changed) == 0:
		fmt.Fprintln(out, "up to date: nothing to change")
	case write:
		fmt.Fprintf(out, "wrote %v; run go generate ./... next\n", changed)
	default:
		fmt.Fprintf(out, "%v would change: run opgen upgrade --write to write them\n", changed)
	}
	return nil
}

// upgradeFile prints the diff from the project's file f to rendered, and
// writes it with write; it reports whether they differ.
func upgradeFile(dir, f string, rendered []byte, write bool, out io.Writer) (bool, error) {
	if !slices.Contains(scaffold.OwnedFiles, f) {
		return false, fmt.Errorf("%s is not a file opgen upgrade renders: name one of %v", f, scaffold.OwnedFiles)
	}
	path := filepath.Join(dir, f)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if bytes.Equal(old, rendered) {
		return false, nil
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(rendered)),
		FromFile: "a/" + f, ToFile: "b/" + f, Context: 3,
	})
	if err != nil {
		return false, err
	}
	fmt.Fprint(out, diff)
	if write {
		if err := osenv.WriteFileAtomic(path, rendered, 0o644); err != nil {
			return false, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return true, nil
}
