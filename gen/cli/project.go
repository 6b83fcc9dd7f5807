package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

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

// Upgrade merges the scaffold files opgen owns (scaffold.UpgradeFiles,
// or those of files) of the project in dir with this opgen's templates,
// three ways, against the templates of the release that scaffolded it
// (or of base), prints the diff of each file that would change on out,
// and writes them with write. Conflicts are marked in the files, as git
// marks them, and make it fail once written.
func Upgrade(dir string, files []string, write bool, base string, out io.Writer) error {
	opts, err := scaffold.ReadProject(dir)
	if err != nil {
		return err
	}
	if v := BuildVersion(); v != "" && v != "(devel)" {
		opts.OpgenVersion = v
	}
	plan, err := scaffold.PlanUpgrade(dir, opts, files, base)
	if err != nil {
		return err
	}
	describePlan(out, opts, plan)
	var changed []string
	var conflicts []string
	for _, f := range plan.Files {
		if f.Note != "" {
			fmt.Fprintf(out, "%s: %s\n", f.Path, f.Note)
		}
		if !f.Changed() {
			continue
		}
		changed = append(changed, f.Path)
		for _, c := range f.Conflicts {
			conflicts = append(conflicts, fmt.Sprintf("%s:%d", f.Path, c.Line))
		}
		if err := upgradeFile(dir, f, write, out); err != nil {
			return err
		}
	}
	return summarize(out, changed, conflicts, write)
}

// describePlan says where the project comes from and what the merge's
// base is.
func describePlan(out io.Writer, opts scaffold.ProjectOptions, plan *scaffold.UpgradePlan) {
	from := plan.From
	if from == "" {
		from = "an opgen from before the scaffold recorded its version"
	}
	fmt.Fprintf(out, "project %s (%s), scaffolded by %s; merging with the templates of %s\n", opts.Name, opts.Module, from, plan.To)
	if plan.Base != "" {
		fmt.Fprintf(out, "base: the templates of opgen %s; your edits stay, conflicts are marked\n", plan.Base)
		return
	}
	fmt.Fprintf(out, "no base: this opgen keeps the templates of %s only, so the new templates replace the files and your edits show as lines removed; name the release that scaffolded the project with --base\n", strings.Join(scaffold.ReleasedVersions(), ", "))
}

func summarize(out io.Writer, changed, conflicts []string, write bool) error {
	switch {
	case len(changed) == 0:
		fmt.Fprintln(out, "up to date: nothing to change")
	case write && len(conflicts) > 0:
		return fmt.Errorf("wrote %v with %d conflict(s), marked as git marks them (<<<<<<<, |||||||, =======, >>>>>>>) at %s: keep your lines, the template's or both, remove the markers, and run go generate ./... again", changed, len(conflicts), strings.Join(conflicts, ", "))
	case write:
		fmt.Fprintf(out, "wrote %v; run go generate ./... next\n", changed)
	case len(conflicts) > 0:
		fmt.Fprintf(out, "%v would change, with %d conflict(s) at %s (marked in the diff above): run opgen upgrade --write, then resolve them\n", changed, len(conflicts), strings.Join(conflicts, ", "))
	default:
		fmt.Fprintf(out, "%v would change: run opgen upgrade --write to write them\n", changed)
	}
	return nil
}

// upgradeFile prints the diff from the project's file to the merged one,
// and writes it with write.
func upgradeFile(dir string, f scaffold.FileUpgrade, write bool, out io.Writer) error {
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(f.Current)), B: difflib.SplitLines(string(f.Merged)),
		FromFile: "a/" + f.Path, ToFile: "b/" + f.Path, Context: 3,
	})
	if err != nil {
		return err
	}
	fmt.Fprint(out, diff)
	if !write {
		return nil
	}
	path := filepath.Join(dir, f.Path)
	if err := osenv.WriteFileAtomic(path, f.Merged, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
