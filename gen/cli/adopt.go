package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/adopt"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

// AdoptOptions are opgen adopt's.
type AdoptOptions struct {
	// Dir is the root of the kubebuilder project.
	Dir string
	// Replace, when set, replaces the opgen module with this checkout in
	// the project's go.mod (development builds of opgen). Default: the
	// checkout the running opgen was built from, if any.
	Replace string
}

// Adopt turns the generation of the kubebuilder project in opts.Dir over
// to opgen: it records opgen as a tool in go.mod (then go mod tidy),
// generates with the kubebuilder layout, and rewrites the Makefile's
// manifests and generate targets to run it. Every check runs before
// anything is written; when tidy or the generation fails, go.mod and
// go.sum are put back and the Makefile is left alone. It prints each
// change on out: the diffs of the Makefile and go.mod, then the files
// the generation wrote.
func Adopt(ctx context.Context, opts AdoptOptions, out, errOut io.Writer) error {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	p, err := adopt.ReadProject(dir)
	if err != nil {
		return err
	}
	name := p.ProjectName
	if name == "" {
		name = gen.NameOf(p.Repo)
	}
	makefile, err := rewritten(dir, "Makefile", func(old []byte) ([]byte, error) {
		s, err := adopt.RewriteMakefile(string(old), adopt.Command(name))
		return []byte(s), err
	})
	if err != nil {
		return err
	}
	if err := adoptGoMod(ctx, dir, opts.Replace, out, errOut); err != nil {
		return err
	}
	fmt.Fprintf(out, "adopted %s (%s): %d kinds\n", name, p.Repo, len(p.OwnKinds()))
	if err := makefile.write(out); err != nil {
		return err
	}
	return generateAdopted(ctx, dir, name, out)
}

// edit is a file's content before and after a change.
type edit struct {
	path, rel string
	old, new  []byte
}

// rewritten reads dir/rel and returns its edit by change.
func rewritten(dir, rel string, change func([]byte) ([]byte, error)) (*edit, error) {
	path := filepath.Join(dir, rel)
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	updated, err := change(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return &edit{path: path, rel: rel, old: old, new: updated}, nil
}

// write prints the diff of e and writes it; an edit that changes nothing
// is skipped.
func (e *edit) write(out io.Writer) error {
	if bytes.Equal(e.old, e.new) {
		return nil
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(e.old)), B: difflib.SplitLines(string(e.new)),
		FromFile: "a/" + e.rel, ToFile: "b/" + e.rel, Context: 1,
	})
	if err != nil {
		return err
	}
	fmt.Fprint(out, diff)
	return osenv.WriteFileAtomic(e.path, e.new, 0o644)
}

// adoptGoMod requires opgen as a tool and tidies; on a failure it puts
// go.mod and go.sum back. It prints the requirements tidy moved: the
// tool's dependencies join the module graph, and a module both need
// goes to the newer version.
func adoptGoMod(ctx context.Context, dir, replace string, out, errOut io.Writer) error {
	version := BuildVersion()
	if version == "(devel)" {
		version = ""
	}
	replace, _ = replaceOrCheckout(replace)
	if replace != "" {
		var err error
		if replace, err = filepath.Abs(replace); err != nil {
			return err
		}
	}
	mod, err := rewritten(dir, "go.mod", func(old []byte) ([]byte, error) { return adopt.AddTool(old, version, replace) })
	if err != nil {
		return err
	}
	sumPath := filepath.Join(dir, "go.sum")
	sum, _ := os.ReadFile(sumPath)
	if err := osenv.WriteFileAtomic(mod.path, mod.new, 0o644); err != nil {
		return err
	}
	if err := goModTidy(ctx, dir, errOut); err != nil {
		_ = osenv.WriteFileAtomic(mod.path, mod.old, 0o644)
		_ = osenv.WriteFileAtomic(sumPath, sum, 0o644)
		return err
	}
	tidied, err := os.ReadFile(mod.path)
	if err != nil {
		return err
	}
	moved, err := adopt.Moved(mod.old, tidied)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "go.mod: tool %s", adopt.Tool)
	if replace != "" {
		fmt.Fprintf(out, " (replaced by %s)", replace)
	}
	fmt.Fprintln(out)
	for _, m := range moved {
		fmt.Fprintf(out, "go.mod: %s\n", m)
	}
	return nil
}

// generateAdopted runs opgen generate as the rewritten Makefile does, and
// lists what it wrote.
func generateAdopted(ctx context.Context, dir, name string, out io.Writer) error {
	opts := gen.Options{Root: dir, Name: name, Version: BuildVersion(), Force: true}
	KubebuilderDefaults(&opts)
	res, err := gen.Run(ctx, opts, generators.Kubebuilder())
	if err != nil {
		return fmt.Errorf("opgen generate --layout kubebuilder: %w", err)
	}
	for _, w := range (&gen.RunError{Errors: res.Warnings}).Relative(dir).Errors {
		fmt.Fprintf(out, "opgen: warning: %s\n", w)
	}
	for _, c := range res.Changes {
		rel, _ := filepath.Rel(dir, c.Path)
		fmt.Fprintf(out, "opgen: %s %s\n", c.Op, rel)
	}
	fmt.Fprintf(out, "next: make manifests and make generate run %q\n", adopt.Command(name))
	return nil
}
