// Command codegen compares opgen generate with the conventional way of
// generating the same code, on the same types: controller-gen (object, crd,
// rbac) and code-generator's applyconfiguration-gen, client-gen,
// lister-gen and informer-gen, run as separate processes in the order
// kube_codegen.sh runs them.
//
// Run it from the bench module:
//
//	cd bench && go run ./codegen            # 3 runs of each measurement
//	cd bench && go run ./codegen -n 5
//
// It builds controller-gen v0.23.0, the code-generator v0.37.2 tools and
// opgen into a temporary directory (not measured), copies the types of
// gen/internal/fixture into two fresh projects outside the repository (one
// per tool chain, with the +genclient tags the conventional tools need; opgen
// ignores them) and measures, taking the median of the runs:
//
//   - cold: every run with a new, empty GOCACHE, so that the package loads
//     pay for everything go list computes; the module cache is warm (no
//     downloads) and the tools are prebuilt.
//   - the first go list: `go list -e -json -compiled=false -deps ./...` in
//     opgen's project with a new, empty GOCACHE, what any generator that
//     loads the packages pays first; opgen's cold run is judged as its
//     time over this one, run by run.
//   - warm: the user's GOCACHE, everything regenerated (opgen --force).
//   - no-op: opgen with nothing changed since the last run, both as the
//     prebuilt binary and through `go run`, as //go:generate runs it.
//
// With -conversions N it measures instead a synthetic API of N kinds in
// two versions whose spokes convert through conversion-gen tags and a
// hand-written function each (conversions.go), as conversion-heavy
// projects are written.
//
// The cold and warm measurements alternate run by run (conventional, opgen,
// conventional, ...) so that a noisy moment hits both; -json writes every
// run's seconds for the benchmark suite (bench/harness).
//
// Every measured command must succeed; the outputs of the two chains are
// not compared (they differ in headers and in what opgen adds).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

const (
	controllerTools = "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"
	codeGenerator   = "k8s.io/code-generator/cmd/%s@v0.37.2"
	module          = "bench.example/fixture"
	group           = "fixture"
)

var (
	runs    = flag.Int("n", 3, "runs of each measurement; the median is reported")
	jsonOut = flag.String("json", "", "also write every run's seconds, by measurement, as JSON to this file")
	keep    = flag.Bool("keep", false, "keep the temporary projects and tools (the path is printed), to profile a tool by hand")
	kinds   = flag.String("kinds", "", "instead of the fixture, synthetic APIs of these numbers of kinds, e.g. 10,50,200: cold, warm and no-op times and the tools' peak RSS (-json writes <file>.scale.json)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "codegen:", err)
		os.Exit(1)
	}
}

func run() error {
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	repoDir = repo
	work, err := os.MkdirTemp("", "opgen-bench-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "keeping", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "bin")
	fmt.Fprintln(os.Stderr, "building the tools (not measured)...")
	if *sides == "" {
		if err := buildTools(repo, bin); err != nil {
			return err
		}
	}
	if *sides != "" {
		return runSides(bin, work, strings.Split(*sides, ","))
	}
	if *conversions > 0 {
		return runConversions(bin, work, *conversions)
	}
	if *kinds != "" {
		sizes, err := parseKinds(*kinds)
		if err != nil {
			return err
		}
		return runScale(bin, work, sizes)
	}
	conventional := filepath.Join(work, "conventional")
	opgen := filepath.Join(work, "opgen")
	for _, dir := range []string{conventional, opgen} {
		if err := newProject(repo, dir); err != nil {
			return err
		}
	}
	r := results{}
	all := map[string][]time.Duration{}
	// once runs one measurement once; fresh gives it a new, empty GOCACHE.
	once := func(name string, f func(gocache string) error, fresh bool, i int) error {
		cache := ""
		if fresh {
			cache = filepath.Join(work, fmt.Sprintf("gocache-%s-%d", strings.ReplaceAll(name, " ", "-"), i))
		}
		start := time.Now()
		if err := f(cache); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all[name] = append(all[name], time.Since(start))
		if cache != "" {
			_ = os.RemoveAll(cache)
		}
		return nil
	}
	conv := func(cache string) error { return runConventional(bin, conventional, cache, nil) }
	convNoCgo := func(cache string) error {
		return runConventional(bin, conventional, cache, []string{"CGO_ENABLED=0"})
	}
	gen := func(force bool) func(string) error {
		return func(cache string) error { return runOpgen(bin, opgen, cache, force) }
	}
	// list is the go command's own first load of the project's packages
	// on an empty GOCACHE, the floor of any generator that reads them
	// with go/packages: what opgen's cold run is judged against.
	list := func(cache string) error {
		return runIn(opgen, cache, nil, "go", "list", "-e", "-json", "-compiled=false", "-deps", "./...")
	}
	type step struct {
		name  string
		f     func(string) error
		fresh bool
	}
	// The compared measurements alternate run by run (conventional, opgen,
	// conventional, ...), so that a noisy moment hits both.
	compared := []step{
		{"conventional cold", conv, true},
		{"conventional cold, CGO_ENABLED=0", convNoCgo, true},
		{"opgen cold", gen(true), true},
		{"go list cold", list, true},
		{"conventional warm", conv, false},
		{"opgen warm (--force)", gen(true), false},
	}
	// The no-op runs come after, in series: a go run no-op is only a no-op
	// after a go run wrote the stamp.
	noops := []step{
		{"opgen no-op (binary)", gen(false), false},
		{"opgen no-op (go run)", func(string) error { return goRunOpgen(opgen) }, false},
	}
	for i := 0; i < *runs; i++ {
		for _, s := range compared {
			if err := once(s.name, s.f, s.fresh, i); err != nil {
				return err
			}
		}
	}
	for _, s := range noops {
		if s.name == "opgen no-op (go run)" {
			// Build and cache the go run binary and let it write the stamp;
			// the binary's no-ops before found the stamp of its own last run.
			if err := goRunOpgen(opgen); err != nil {
				return err
			}
		}
		for i := 0; i < *runs; i++ {
			if err := once(s.name, s.f, s.fresh, i); err != nil {
				return err
			}
		}
	}
	for name, times := range all {
		r[name] = median(times)
		fmt.Fprintf(os.Stderr, "%-40s %v\n", name, times)
	}
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, all); err != nil {
			return err
		}
	}
	r.print()
	return nil
}

type results map[string]time.Duration

func (r results) print() {
	fmt.Printf("\nopgen generate vs controller-gen + code-generator, fixture types, %d CPU(s), %s, median of %d\n\n", runtime.NumCPU(), runtime.Version(), *runs)
	fmt.Printf("| measurement | conventional | opgen | speed-up |\n|---|---|---|---|\n")
	row := func(name string, c, o time.Duration) {
		fmt.Printf("| %s | %s | %s | %.1fx |\n", name, round(c), round(o), float64(c)/float64(o))
	}
	row("cold (fresh GOCACHE)", r["conventional cold"], r["opgen cold"])
	row("cold, conventional with CGO_ENABLED=0 too", r["conventional cold, CGO_ENABLED=0"], r["opgen cold"])
	fmt.Printf("| cold: the first go list -deps alone, its floor | - | %s | opgen's run is %s more |\n", round(r["go list cold"]), round(r["opgen cold"]-r["go list cold"]))
	row("warm (regenerate all)", r["conventional warm"], r["opgen warm (--force)"])
	fmt.Printf("| no-op, binary | - | %s | |\n", round(r["opgen no-op (binary)"]))
	fmt.Printf("| no-op, go run (as go:generate) | - | %s | |\n", round(r["opgen no-op (go run)"]))
}

// writeFloatJSON writes values by name.
func writeFloatJSON(path string, all map[string][]float64) error {
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// writeJSON writes the seconds of every run, by measurement name.
func writeJSON(path string, all map[string][]time.Duration) error {
	out := map[string][]float64{}
	for name, times := range all {
		for _, t := range times {
			out[name] = append(out[name], t.Seconds())
		}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func round(d time.Duration) string { return d.Round(time.Millisecond).String() }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// buildTools installs the tools into bin.
func buildTools(repo, bin string) error {
	var codegen []string
	for _, tool := range []string{"applyconfiguration-gen", "client-gen", "lister-gen", "informer-gen", "conversion-gen"} {
		codegen = append(codegen, fmt.Sprintf(codeGenerator, tool))
	}
	// go install takes the packages of one module at a time.
	for _, pkgs := range [][]string{{controllerTools}, codegen} {
		install := exec.Command("go", append([]string{"install"}, pkgs...)...)
		install.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=-mod=mod")
		if out, err := install.CombinedOutput(); err != nil {
			return fmt.Errorf("go install %s: %v\n%s", strings.Join(pkgs, " "), err, out)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "opgen"), "./cmd/opgen")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build opgen: %v\n%s", err, out)
	}
	return nil
}

// newProject creates a module in dir with the fixture's API types.
func newProject(repo, dir string) error { return newProjectOf(repo, repoDir, dir) }

// newProjectOf creates a module in dir with the fixture's API types of the
// checkout types that uses the opgen of the checkout opgen.
func newProjectOf(types, opgen, dir string) error {
	src := filepath.Join(types, "gen", "internal", "fixture", "apis")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dir, "apis", rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		// A spoke's conversion.go imports its hub by the repository's
		// (internal) path: point it at the copy.
		data = bytes.ReplaceAll(data, []byte("github.com/opgen-sdk/opgen/gen/internal/fixture/apis"), []byte(module+"/apis"))
		return os.WriteFile(out, withGenclientTags(data), 0o644)
	})
	if err != nil {
		return err
	}
	return newModuleOf(dir, opgen)
}

// repoDir is the repository, for newModule.
var repoDir string

// newModule writes the go.mod and go.sum of a project in dir that uses the
// repository's opgen, and tidies it.
func newModule(dir string) error { return newModuleOf(dir, repoDir) }

// newModuleOf writes the go.mod and go.sum of a project in dir that uses
// the opgen of the checkout repo, and tidies it.
func newModuleOf(dir, repo string) error {
	// The tool directive is how a project pins opgen for its go:generate line.
	gomod := fmt.Sprintf("module %s\n\ngo 1.26.0\n\ntool github.com/opgen-sdk/opgen/cmd/opgen\n\nrequire github.com/opgen-sdk/opgen v0.0.0\n\nreplace github.com/opgen-sdk/opgen => %s\n", module, repo)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return err
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %v\n%s", dir, err, out)
	}
	return nil
}

// withGenclientTags adds the tags client-gen needs to each root kind, as a
// conventional project writes them: +genclient, +genclient:nonNamespaced
// for cluster-scoped kinds, +genclient:noStatus without a status
// subresource.
func withGenclientTags(src []byte) []byte {
	lines := strings.Split(string(src), "\n")
	var out []string
	for i, l := range lines {
		out = append(out, l)
		if strings.TrimSpace(l) != "// +kubebuilder:object:root=true" || isListDecl(lines[i:]) {
			continue
		}
		out = append(out, "// +genclient")
		block := strings.Join(lines[i:min(i+12, len(lines))], "\n")
		if strings.Contains(block, "scope=Cluster") {
			out = append(out, "// +genclient:nonNamespaced")
		}
		if !strings.Contains(block, "+kubebuilder:subresource:status") {
			out = append(out, "// +genclient:noStatus")
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// isListDecl reports whether the type declared after the marker is a list.
func isListDecl(rest []string) bool {
	for _, l := range rest {
		if strings.HasPrefix(l, "type ") {
			return strings.Contains(strings.Fields(l)[1], "List")
		}
	}
	return false
}

func env(gocache string, extra ...string) []string {
	e := append(os.Environ(), extra...)
	if gocache != "" {
		e = append(e, "GOCACHE="+gocache)
	}
	return append(e, "GOFLAGS=-mod=mod")
}

func runIn(dir, gocache string, extraEnv []string, name string, args ...string) error {
	_, err := runInRSS(dir, gocache, extraEnv, name, args...)
	return err
}

// runInRSS runs a command and returns its peak RSS.
func runInRSS(dir, gocache string, extraEnv []string, name string, args ...string) (int64, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env(gocache, extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return maxRSS(cmd.ProcessState), nil
}

// runConventional runs the tools the way kube_codegen.sh and a kubebuilder
// Makefile do: one process per generator.
func runConventional(bin, dir, gocache string, extraEnv []string) error {
	_, err := runConventionalEnv(bin, dir, gocache, extraEnv, []string{group + "/v1", group + "/v1beta1"})
	return err
}

// runConventionalOn runs the conventional tools over the group versions
// inputs (group/version under apis/) and returns the largest peak RSS of
// their processes.
func runConventionalOn(bin, dir, gocache string, inputs []string) (int64, error) {
	return runConventionalEnv(bin, dir, gocache, nil, inputs)
}

func runConventionalEnv(bin, dir, gocache string, extraEnv, gvs []string) (int64, error) {
	var inputs, clientInputs []string
	for _, gv := range gvs {
		inputs = append(inputs, "./apis/"+gv)
		clientInputs = append(clientInputs, "--input", gv)
	}
	out := module + "/pkg/generated"
	steps := [][]string{
		{"controller-gen", "object", "crd", "rbac:roleName=manager-role", "paths=./...",
			"output:crd:artifacts:config=config/crd", "output:rbac:artifacts:config=config/rbac"},
		append([]string{"applyconfiguration-gen", "--output-dir", "pkg/generated/applyconfiguration", "--output-pkg", out + "/applyconfiguration"}, inputs...),
		append([]string{"client-gen", "--output-dir", "pkg/generated/clientset", "--output-pkg", out + "/clientset", "--clientset-name", "versioned",
			"--apply-configuration-package", out + "/applyconfiguration", "--input-base", filepath.Join(dir, "apis")}, clientInputs...),
		append([]string{"lister-gen", "--output-dir", "pkg/generated/listers", "--output-pkg", out + "/listers"}, inputs...),
		append([]string{"informer-gen", "--output-dir", "pkg/generated/informers", "--output-pkg", out + "/informers",
			"--versioned-clientset-package", out + "/clientset/versioned", "--listers-package", out + "/listers"}, inputs...),
	}
	var peak int64
	for _, s := range steps {
		rss, err := runInRSS(dir, gocache, extraEnv, filepath.Join(bin, s[0]), s[1:]...)
		if err != nil {
			return 0, err
		}
		peak = max(peak, rss)
	}
	return peak, nil
}

func runOpgen(bin, dir, gocache string, force bool) error {
	_, err := runOpgenRSS(bin, dir, gocache, force)
	return err
}

// runOpgenRSS runs opgen generate and returns its peak RSS.
func runOpgenRSS(bin, dir, gocache string, force bool) (int64, error) {
	args := []string{"generate", "./..."}
	if force {
		args = append(args, "--force")
	}
	return runInRSS(dir, gocache, nil, filepath.Join(bin, "opgen"), args...)
}

// goRunOpgen runs opgen as a //go:generate line in the project does.
func goRunOpgen(dir string) error {
	return runIn(dir, "", nil, "go", "run", "github.com/opgen-sdk/opgen/cmd/opgen", "generate", "./...")
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	// Run from bench/: the repository is the parent of the bench module.
	return filepath.Dir(filepath.Dir(strings.TrimSpace(string(out)))), nil
}
