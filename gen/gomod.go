package gen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Generated code imports packages of modules that the project's go.mod
// may not require yet: the round-trip tests of conversions import
// opgen's pkg/conversiontest, which imports go-cmp and apimachinery's
// fuzzers. Left so, the next go generate, go build or go test stops with
// "go: updates to go.mod needed". Before a run writes anything,
// requireImports asks the go command to add what the staged files need,
// at the versions the module graph already selects (those opgen's own
// go.mod pins, or higher), and stops the run, writing nothing, when it
// cannot.

// requireImports makes go.mod and go.sum provide the packages the Go files
// the run will write import. It returns the files it changed. The go
// command is asked only when those files import, from other modules,
// packages the last check did not see, or when go.mod or go.sum changed
// since (the stamp records both).
func requireImports(ctx context.Context, p *Project, out *Output, st *stamp) ([]Change, error) {
	st.verified, st.modules = st.prev.Verified, st.prev.Modules
	changed := map[string][]byte{}
	for path, data := range out.Differing() {
		if strings.HasSuffix(path, ".go") {
			changed[path] = data
		}
	}
	if len(changed) == 0 {
		return nil, nil // what is on disk is what the run would write
	}
	imports := externalImports(p, changed)
	modules, err := moduleFiles(p)
	if err != nil {
		return nil, err
	}
	if modules == st.prev.Modules && subset(imports, st.prev.Verified) {
		return nil, nil
	}
	gomod, gosum := filepath.Join(p.ModuleDir, "go.mod"), filepath.Join(p.ModuleDir, "go.sum")
	before := map[string][]byte{gomod: nil, gosum: nil}
	for path := range before {
		before[path], _ = os.ReadFile(path)
	}
	if err := listWithOverlay(ctx, p, changed); err != nil {
		for path, data := range before {
			if data != nil {
				_ = os.WriteFile(path, data, 0o644)
			}
		}
		return nil, err
	}
	var changes []Change
	for _, path := range []string{gomod, gosum} {
		if data, _ := os.ReadFile(path); !bytes.Equal(data, before[path]) {
			changes = append(changes, Change{Path: path, Op: "update"})
		}
	}
	if modules != st.prev.Modules {
		st.verified = nil
	}
	st.verified = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(st.verified), imports...))))
	st.modules, err = moduleFiles(p)
	return changes, err
}

// moduleFiles identifies the content of go.mod and go.sum.
func moduleFiles(p *Project) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(p.ModuleDir, name))
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// externalImports returns the import paths of files that are not of the
// standard library or the project's module, sorted.
func externalImports(p *Project, files map[string][]byte) []string {
	var imports []string
	fset := token.NewFileSet()
	for path, data := range files {
		f, err := parser.ParseFile(fset, path, data, parser.ImportsOnly)
		if err != nil {
			continue // the run reports Go that does not parse
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err == nil && !standard(imp) && imp != p.ModulePath && !strings.HasPrefix(imp, p.ModulePath+"/") {
				imports = append(imports, imp)
			}
		}
	}
	slices.Sort(imports)
	return slices.Compact(imports)
}

// subset reports whether every element of a, sorted, is in b, sorted.
func subset(a, b []string) bool {
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			return false
		}
	}
	return true
}

// standard reports whether an import path is of the standard library:
// its first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// listWithOverlay lists the packages of files, with their tests and
// dependencies, as if files were written (go list -overlay), letting the
// go command add to go.mod and go.sum the requirements they need
// (-mod=mod). It fails with what the go command says when a package
// cannot be provided.
func listWithOverlay(ctx context.Context, p *Project, files map[string][]byte) error {
	tmp, err := os.MkdirTemp("", "opgen-overlay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	overlay := map[string]map[string]string{"Replace": {}}
	var dirs []string
	for path, data := range files {
		staged := filepath.Join(tmp, strconv.Itoa(len(overlay["Replace"]))+".go")
		if err := os.WriteFile(staged, data, 0o644); err != nil {
			return err
		}
		overlay["Replace"][path] = staged
		dirs = append(dirs, filepath.Dir(path))
	}
	slices.Sort(dirs)
	data, err := json.Marshal(overlay)
	if err != nil {
		return err
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, data, 0o644); err != nil {
		return err
	}
	args := append([]string{"list", "-mod=mod", "-e", "-deps", "-test", "-overlay=" + overlayFile, "-tags=ignore_autogenerated",
		"-f", `{{with .Error}}{{.}}{{"\n"}}{{end}}{{range .DepsErrors}}{{.}}{{"\n"}}{{end}}`}, slices.Compact(dirs)...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = p.ModuleDir
	cmd.Env = LoadEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var problems []string
	for _, line := range strings.Split(stdout.String()+stderr.String(), "\n") {
		if moduleProblem(line) {
			problems = append(problems, strings.TrimSpace(line))
		}
	}
	if runErr != nil && len(problems) == 0 {
		problems = strings.Split(strings.TrimSpace(stderr.String()), "\n")
	}
	if runErr == nil && len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return fmt.Errorf("the generated code imports packages that go.mod does not provide, and the go command could not add them (go list -mod=mod -deps -test over the new files): %s: fix what it names, then run go generate again; nothing was written%s",
		firstLines(slices.Compact(problems), 6), errSuffix(runErr))
}

// moduleProblem reports whether a line of the go command says that a
// package's module is missing from go.mod or go.sum; the other errors of
// the project's packages are not the run's to report.
func moduleProblem(line string) bool {
	for _, s := range []string{"no required module provides", "missing go.sum entry", "updates to go.mod needed", "cannot find module", "module lookup disabled", "no matching versions", "verifying module"} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

func firstLines(lines []string, n int) string {
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "; ")
}

func errSuffix(err error) string {
	var exit *exec.ExitError
	if err == nil || errors.As(err, &exit) {
		return ""
	}
	return " (" + err.Error() + ")"
}
