package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/pflag"

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
	options, err := readOptions(dir)
	if err != nil {
		return err
	}
	makefile, err := rewritten(dir, "Makefile", func(old []byte) ([]byte, error) {
		s, err := adopt.RewriteMakefile(string(old), adopt.Command(name, options.Flags))
		return []byte(s), err
	})
	if err != nil {
		return err
	}
	pins, err := adoptGoMod(ctx, dir, opts.Replace, out, errOut)
	if err != nil {
		return err
	}
	makefile.new = []byte(adopt.PinVersions(string(makefile.new), pins))
	fmt.Fprintf(out, "adopted %s (%s): %s\n", name, p.Repo, plural(p.KindCount(), "kind", "kinds"))
	for _, n := range options.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	for _, k := range p.ConversionWebhooks() {
		fmt.Fprintf(out, "note: %s has a conversion webhook: controller-runtime's webhook server in the project keeps serving it, and its CRD gets the conversion from config/crd's kustomize patches, as before\n", k)
	}
	if err := makefile.write(out); err != nil {
		return err
	}
	gitignore, err := rewritten(dir, ".gitignore", ignoreKubeconfigs)
	if err != nil {
		return err
	}
	if err := gitignore.write(out); err != nil {
		return err
	}
	return generateAdopted(ctx, dir, name, options.Flags, out)
}

// readOptions reads the options the project passes controller-gen (in its
// Makefile) and code-generator (in hack/*.sh).
func readOptions(dir string) (adopt.Options, error) {
	makefile, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		return adopt.Options{}, err
	}
	scripts := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(dir, "hack", "*.sh"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return adopt.Options{}, err
		}
		rel, _ := filepath.Rel(dir, p)
		scripts[rel] = string(data)
	}
	return adopt.ReadOptions(string(makefile), scripts), nil
}

// ignoreKubeconfigs adds .kube/ to a .gitignore (a missing one is empty):
// opgen dev --kubeconfig .kube/config writes admin credentials there.
func ignoreKubeconfigs(old []byte) ([]byte, error) {
	for _, line := range strings.Split(string(old), "\n") {
		if l := strings.TrimSpace(line); l == ".kube/" || l == ".kube" || l == "/.kube/" {
			return old, nil
		}
	}
	out := string(old)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out + "\n# Kubeconfigs of local control planes (opgen dev --kubeconfig .kube/config)\n.kube/\n"), nil
}

// edit is a file's content before and after a change.
type edit struct {
	path, rel string
	old, new  []byte
}

// rewritten reads dir/rel and returns its edit by change. A .gitignore
// that does not exist is empty.
func rewritten(dir, rel string, change func([]byte) ([]byte, error)) (*edit, error) {
	path := filepath.Join(dir, rel)
	old, err := os.ReadFile(path)
	if os.IsNotExist(err) && rel == ".gitignore" {
		err = nil
	}
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
// goes to the newer version. It returns the Makefile variables to pin
// because of that (adopt.EnvtestPins).
func adoptGoMod(ctx context.Context, dir, replace string, out, errOut io.Writer) (map[string]string, error) {
	version := BuildVersion()
	if version == "(devel)" {
		version = ""
	}
	replace, _ = replaceOrCheckout(replace)
	if replace != "" {
		var err error
		if replace, err = filepath.Abs(replace); err != nil {
			return nil, err
		}
	}
	mod, err := rewritten(dir, "go.mod", func(old []byte) ([]byte, error) { return adopt.AddTool(old, version, replace) })
	if err != nil {
		return nil, err
	}
	sumPath := filepath.Join(dir, "go.sum")
	sum, _ := os.ReadFile(sumPath)
	if err := osenv.WriteFileAtomic(mod.path, mod.new, 0o644); err != nil {
		return nil, err
	}
	if err := goModTidy(ctx, dir, errOut); err != nil {
		_ = osenv.WriteFileAtomic(mod.path, mod.old, 0o644)
		_ = osenv.WriteFileAtomic(sumPath, sum, 0o644)
		return nil, err
	}
	tidied, err := os.ReadFile(mod.path)
	if err != nil {
		return nil, err
	}
	moved, err := adopt.Moved(mod.old, tidied)
	if err != nil {
		return nil, err
	}
	pins, err := adopt.EnvtestPins(mod.old, tidied)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "go.mod: tool %s", adopt.Tool)
	if replace != "" {
		fmt.Fprintf(out, " (replaced by %s)", replace)
	}
	fmt.Fprintln(out)
	for _, m := range moved {
		fmt.Fprintf(out, "go.mod: %s\n", m)
	}
	for _, name := range slices.Sorted(maps.Keys(pins)) {
		fmt.Fprintf(out, "Makefile: %s pinned to %s, what go.mod gave it before\n", name, pins[name])
	}
	return pins, nil
}

// generateAdopted runs opgen generate as the rewritten Makefile does, and
// lists what it wrote.
func generateAdopted(ctx context.Context, dir, name string, flags []string, out io.Writer) error {
	var gf GenerateFlags
	set := pflag.NewFlagSet("opgen generate", pflag.ContinueOnError)
	gf.Register(set)
	if err := set.Parse(adopt.CommandArgs(name, flags)); err != nil {
		return fmt.Errorf("the flags adopt carried over: %w", err)
	}
	gopts, err := gf.Options()
	if err != nil {
		return err
	}
	opts := gopts.Options
	opts.Root, opts.Version, opts.Force = dir, BuildVersion(), true
	KubebuilderDefaults(&opts)
	selected, err := generators.PickLayout("kubebuilder", gopts.Only)
	if err != nil {
		return err
	}
	res, err := gen.Run(ctx, opts, selected)
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
	fmt.Fprintf(out, "next: make manifests and make generate run %q\n", adopt.Command(name, flags))
	return nil
}

// plural writes n with the noun that agrees with it.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
