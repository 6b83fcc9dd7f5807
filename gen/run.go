package gen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/token"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/go/packages"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"

	"github.com/opgen-sdk/opgen/gen/diag"
	"github.com/opgen-sdk/opgen/gen/internal/lean"
	"github.com/opgen-sdk/opgen/gen/internal/universe"
	"github.com/opgen-sdk/opgen/gen/k8stags"
	opgenmarkers "github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/gen/model"
)

// Result says what a run did.
type Result struct {
	// UpToDate is true when the stamp showed that nothing changed since
	// the last run, which then did nothing else.
	UpToDate bool
	// Changes are the files written, created or removed.
	Changes []Change
	// Output is the staged output, for tests.
	Output *Output
	// Warnings are what the run did differently from what the user may
	// expect, each with its fix, by position.
	Warnings []*diag.Error
	// Timings are the durations of the run's stages and generators, in
	// the order they finished.
	Timings []Timing
	// Notes say where the run went a slower way, and why (Context.Note).
	Notes []string
}

// Report prints to w, with paths relative to root, the scaffolds the run
// created, which are the user's to edit, and the go.mod and go.sum it
// updated; with verbose, every other file it wrote or removed, the time of
// each stage and the total, took.
func (r *Result) Report(w io.Writer, root string, verbose bool, took time.Duration) {
	if r.UpToDate {
		if verbose {
			fmt.Fprintf(w, "opgen: up to date (%v)\n", took.Round(time.Millisecond))
		}
		return
	}
	if len(r.Warnings) > 0 {
		for _, warn := range (&RunError{Errors: r.Warnings}).Relative(root).Errors {
			fmt.Fprintf(w, "opgen: warning: %s\n", warn)
		}
	}
	for _, c := range r.Changes {
		rel, _ := filepath.Rel(root, c.Path)
		if c.Op == "create" || c.Op == "update" || verbose {
			fmt.Fprintf(w, "opgen: %s %s\n", c.Op, rel)
		}
	}
	if verbose {
		for _, t := range r.Timings {
			fmt.Fprintf(w, "opgen: %-22s %v\n", t.Name, t.Duration.Round(time.Millisecond))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "opgen: note: %s\n", n)
		}
		fmt.Fprintf(w, "opgen: %d file(s) changed (%v)\n", len(r.Changes), took.Round(time.Millisecond))
	}
}

// Run runs generators on the project opts describe: it loads the packages
// once, builds the API model, runs the generators (those that are
// Concurrent in parallel with the others) and, when no generator reported
// an error, writes the output. A failed run returns a *RunError with every
// error and writes nothing but the stubs its errors ask the user to
// complete (Output.Stub).
func Run(ctx context.Context, opts Options, generators map[string]Generator) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	names := sortedNames(generators)
	// The generated files the stamp records do not depend on the
	// packages: decoding the stamp and stating them overlaps with the
	// walk of the project, which lists again only the directories
	// changed since the stamp's run.
	check := !opts.Force && !opts.DryRun
	st := openStamp(&opts, names)
	var prevDirs map[string]dirList
	if check {
		prevDirs = stampDirs(st.raw)
	}
	outputsOK := make(chan bool, 1)
	go func() {
		st.load()
		outputsOK <- check && st.outputsUnchanged()
	}()
	p, err := newProject(opts, prevDirs)
	unchanged := <-outputsOK
	if err != nil {
		return nil, err
	}
	st.project = p
	if unchanged && st.inputsUnchanged() {
		st.refresh(p.walk)
		return &Result{UpToDate: true}, nil
	}
	clk := &clock{allocs: opts.Timings}
	gctx, err := newContext(ctx, p, generators, names, clk)
	if err != nil {
		return nil, err
	}
	err = runGenerators(gctx, generators, names, clk)
	gctx.Output.Wait()
	if err != nil {
		// A library that fails on the types usually fails on a Go error
		// in them (a field of an undefined type), which is the error to
		// show; otherwise the failure is placed at the first API package
		// so that it comes with the run's other errors.
		collectPackageErrors(gctx)
		if gctx.Errors.Len() == 0 {
			gctx.Errors.Add(gctx.API.FirstPos(), "%v", err)
		}
		return nil, runError(gctx.Errors)
	}
	collectPackageErrors(gctx)
	if err := runError(gctx.Errors); err != nil {
		if opts.DryRun {
			return nil, err
		}
		if gctx.Errors.OnlyStubs() {
			return nil, commitWithStubs(ctx, p, gctx, st, err.(*RunError))
		}
		wrote, serr := gctx.Output.CommitStubs()
		if serr != nil {
			return nil, fmt.Errorf("write the stubs: %w; the run also failed: %w", serr, err)
		}
		runErr := err.(*RunError)
		for _, c := range wrote {
			runErr.Wrote = append(runErr.Wrote, c.Path)
		}
		return nil, runErr
	}
	res := &Result{Output: gctx.Output, Warnings: gctx.Warnings.List(), Notes: gctx.notes.list()}
	if !opts.DryRun {
		var modChanges []Change
		clk.measure("compare, go.mod", func() { modChanges, err = requireImports(ctx, p, gctx.Output, st) })
		if err != nil {
			return nil, err
		}
		var werr error
		clk.measure("write", func() {
			if res.Changes, werr = gctx.Output.Commit(); werr == nil {
				st.Save(gctx.Output.Files())
			}
		})
		if werr != nil {
			return nil, fmt.Errorf("write the generated files: %w", werr)
		}
		res.Changes = append(modChanges, res.Changes...)
	}
	res.Timings = clk.timings
	return res, nil
}

// commitWithStubs writes the whole output of a run whose only errors are
// functions the user must write (Errors.AddStub): with the stubs, it
// builds, and the stubs fail at run time with what to write. The run
// still fails, so that go generate stops until they are written; no stamp
// is saved, so the next run checks them again.
func commitWithStubs(ctx context.Context, p *Project, gctx *Context, st *stamp, runErr *RunError) error {
	if _, err := requireImports(ctx, p, gctx.Output, st); err != nil {
		return err
	}
	stubs := gctx.Output.StubPaths()
	if _, err := gctx.Output.Commit(); err != nil {
		return fmt.Errorf("write the generated files: %w; the run also failed: %w", err, runErr)
	}
	runErr.Wrote, runErr.WroteOutput = stubs, true
	return runErr
}

func sortedNames(generators map[string]Generator) []string {
	names := make([]string, 0, len(generators))
	for n := range generators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// newContext loads the roots once and builds the API model.
func newContext(ctx context.Context, p *Project, generators map[string]Generator, names []string, clk *clock) (*Context, error) {
	reg := &markers.Registry{}
	if err := registerModelMarkers(reg); err != nil {
		return nil, err
	}
	var filters []loader.NodeFilter
	for _, name := range names {
		g := generators[name]
		if err := g.RegisterMarkers(reg); err != nil {
			return nil, fmt.Errorf("%s: register markers: %w", name, err)
		}
		if f, ok := g.(interface{ CheckFilter() loader.NodeFilter }); ok {
			filters = append(filters, f.CheckFilter())
		}
	}
	if !p.IgnoreK8sTags {
		// After every generator's markers: k8stags reads +k8s:enum in
		// place of controller-tools' definition.
		if err := k8stags.Register(reg); err != nil {
			return nil, err
		}
	}
	cfg := &packages.Config{Context: ctx, Dir: p.Root, Env: LoadEnv(), BuildFlags: LoadFlags}
	var roots []*loader.Package
	var err error
	if paths := p.LoadPaths(); len(paths) > 0 {
		// By import path, the loader asks the go command once for all.
		clk.measure("load", func() { roots, err = loader.LoadRootsWithConfig(cfg, paths...) })
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(p.Patterns, " "), err)
	}
	if cfg.Fset == nil {
		cfg.Fset = token.NewFileSet()
	}
	errs := &diag.Errors{}
	out := NewOutput(errs)
	if p.HeaderFile != "" {
		text, err := os.ReadFile(p.Abs(p.HeaderFile))
		if err != nil {
			return nil, fmt.Errorf("header file: %w; give --header-file the path of the licence text, relative to the project root", err)
		}
		if p.HeaderYear != "" {
			text = bytes.ReplaceAll(text, []byte(" YEAR"), []byte(" "+p.HeaderYear))
		}
		out.SetLicense(string(text), !p.HeaderGoOnly)
	}
	gctx := &Context{
		Context:   ctx,
		Project:   p,
		Roots:     roots,
		Fset:      cfg.Fset,
		Collector: &markers.Collector{Registry: reg},
		Checker:   &loader.TypeChecker{NodeFilters: filters},
		Output:    out,
		Errors:    errs,
		Warnings:  &diag.Errors{},
		notes:     &notes{},
		clock:     clk,
	}
	gctx.API = buildAPISafely(gctx, generators)
	return gctx, nil
}

// fullTypes returns the loaded packages whose types the generators read in
// full besides the API packages (FullTyper).
func fullTypes(ctx *Context, api *model.API, generators map[string]Generator) []*loader.Package {
	var paths []string
	for _, name := range sortedNames(generators) {
		if ft, ok := generators[name].(FullTyper); ok {
			paths = append(paths, ft.FullTypes(ctx, api)...)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	found, _ := universe.Find(ctx.Roots, paths)
	var out []*loader.Package
	for _, path := range slices.Sorted(maps.Keys(found)) {
		out = append(out, found[path])
	}
	return out
}

// checksOf says which checks of the field types the generators of a run
// need: only those of the tools that would fail on them.
func checksOf(generators map[string]Generator) model.Checks {
	var c model.Checks
	for _, g := range generators {
		_, crds := g.(CRDReader)
		_, copies := g.(DeepCopier)
		_, clients := g.(ClientWriter)
		c.Schemas = c.Schemas || crds
		c.DeepCopies = c.DeepCopies || copies
		c.Clients = c.Clients || clients
	}
	return c
}

// buildAPISafely builds the API model from the run's load; a panic while
// reading the markers (a library meeting input it did not expect) becomes
// an error, and the model is empty.
func buildAPISafely(ctx *Context, generators map[string]Generator) (api *model.API) {
	checks := checksOf(generators)
	defer func() {
		if v := recover(); v != nil {
			reportPanic(ctx, "reading the API types", noPos, v)
			api = &model.API{}
		}
	}()
	p := ctx.Project
	return model.Build(model.Input{
		Roots:     ctx.Roots,
		Fset:      ctx.Fset,
		Collector: ctx.Collector,
		Checker:   ctx.Checker,
		Options: model.Options{
			ControllerDir:              p.ControllerDir,
			ControllerAbs:              p.Abs(p.ControllerDir),
			AllowDangerousTypes:        p.AllowDangerousTypes,
			GenerateEmbeddedObjectMeta: p.GenerateEmbeddedObjectMeta,
			IgnoreUnexportedFields:     p.IgnoreUnexportedFields,
			IgnoreK8sTags:              p.IgnoreK8sTags,
			StrictMarkers:              p.StrictMarkers,
			StrictConversion:           p.StrictConversion,
			Checks:                     checks,
			ClientKinds:                p.Clients.Kinds,
			ClientDirs:                 p.ClientDirs,
			CRDDirs:                    p.CRDDirs,
			StrictTypes:                p.StrictTypes,
			ProjectServesConversions:   p.ProjectServesConversions,
		},
		Errors:   ctx.Errors,
		Warnings: ctx.Warnings,
		Measure:  ctx.clock.measure,
		TypeCheck: func(pkgs []*loader.Package, api *model.API) {
			lean.Dependencies(ctx.Fset, ctx.Checker, append(pkgs, fullTypes(ctx, api, generators)...))
		},
	})
}

// recoverAsError turns a panic of the calling function into an error of
// the run at pos, so that a library that fails on unexpected input does
// not hide the run's other errors. It must be deferred directly.
func recoverAsError(ctx *Context, what string, pos token.Position) {
	if v := recover(); v != nil {
		reportPanic(ctx, what, pos, v)
	}
}

// Recover turns a panic of the calling generator into an error of the run
// at the package clause of pkg, so that one package that a library fails
// on does not hide the rest of the run. It must be deferred directly:
//
//	defer ctx.Recover("the deepcopy generator", pkg)
func (c *Context) Recover(what string, pkg *loader.Package) {
	if v := recover(); v != nil {
		reportPanic(c, what, packagePos(c, pkg), v)
	}
}

func reportPanic(ctx *Context, what string, pos token.Position, v any) {
	frame := panicFrame(debug.Stack())
	ctx.Errors.Add(pos, "%s failed on these API types (%v, at %s): this is a bug of opgen or of the library it calls, not of your code; please report it with the types, and meanwhile look for an unusual field type or marker near here", what, v, frame)
}

// panicFrame returns the function that panicked, from a stack taken in
// the deferred recover: the first frame after the runtime's panic frames.
func panicFrame(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic(") {
			continue
		}
		for j := i + 2; j+1 < len(lines); j += 2 {
			if !strings.HasPrefix(lines[j], "runtime.") {
				fn := lines[j]
				if paren := strings.LastIndex(fn, "("); paren > 0 {
					fn = fn[:paren]
				}
				return fn + " " + strings.TrimSpace(strings.SplitN(strings.TrimSpace(lines[j+1]), " ", 2)[0])
			}
		}
	}
	return "unknown function"
}

// LoadFlags are the go list flags of opgen's package loads.
// controller-tools' loader asks go/packages for compiled Go files, for
// which go list computes the package's build (hashing every file of every
// dependency: a second with an empty build cache). With cgo off (LoadEnv),
// a package's compiled Go files are its Go files, which go/packages
// returns when go list is told not to compute them.
var LoadFlags = []string{"-compiled=false"}

// LoadEnv is the environment of opgen's package loads: the process's,
// with cgo off. API types never use cgo, and with it on, go list runs cgo
// on every dependency that has C files (net, os/user, ...) before it
// answers, which dominates a load with a cold build cache.
func LoadEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0")
}

// registerModelMarkers registers the kubebuilder markers the API model
// reads, whichever generators run.
func registerModelMarkers(reg *markers.Registry) error {
	if err := crdmarkers.Register(reg); err != nil {
		return err
	}
	if err := reg.Define("kubebuilder:object:generate", markers.DescribesPackage, false); err != nil {
		return err
	}
	if err := reg.Define("kubebuilder:object:root", markers.DescribesType, false); err != nil {
		return err
	}
	return opgenmarkers.Register(reg)
}

// runGenerators runs the sequential generators one after another, in
// name order, and the concurrent ones beside them; with
// Options.Timings, all of them one after another, so that each one's
// allocation is measured alone. When the model is already broken, no
// generator runs: their output would be partial and their errors
// consequences of the model's. The API packages are still type-checked,
// so that their Go errors are reported in the same run.
func runGenerators(ctx *Context, generators map[string]Generator, names []string, clk *clock) error {
	if ctx.Errors.Len() > 0 {
		for _, v := range ctx.API.Versions() {
			ctx.Checker.Check(v.Package)
		}
		return nil
	}
	for _, name := range names {
		if _, ok := generators[name].(CRDReader); ok {
			clk.measure("CRD schemas", func() { ctx.CRDs() })
			break
		}
	}
	errs := make([]error, len(names))
	for i, name := range names {
		if pr, ok := generators[name].(Preparer); ok {
			clk.measure(name+" (prepare)", func() { errs[i] = pr.Prepare(ctx) })
			if errs[i] != nil {
				return fmt.Errorf("%s: %w", name, errs[i])
			}
		}
	}
	concurrent := func(name string) bool {
		_, ok := generators[name].(Concurrent)
		return ok && !clk.allocs
	}
	var wg sync.WaitGroup
	for i, name := range names {
		if concurrent(name) {
			wg.Go(func() { clk.measure(name+" (concurrent)", func() { errs[i] = generate(ctx, name, generators[name]) }) })
		}
	}
	for i, name := range names {
		if !concurrent(name) {
			clk.measure(name, func() { errs[i] = generate(ctx, name, generators[name]) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func generate(ctx *Context, name string, g Generator) (err error) {
	defer recoverAsError(ctx, "the "+name+" generator", ctx.API.FirstPos())
	if err := g.Generate(ctx); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
