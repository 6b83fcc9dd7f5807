package adopt

import (
	"fmt"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Module is opgen's module, and Tool its command, which an adopted
// project runs as `go tool opgen`.
const (
	Module = "github.com/opgen-sdk/opgen"
	Tool   = Module + "/cmd/opgen"
)

// replacedVersion is the version required of a module that a replace
// directive points at a directory: any will do.
const replacedVersion = "v0.0.0-00010101000000-000000000000"

// AddTool returns the go.mod in data with opgen required at version, or
// replaced by the directory replace when set (a checkout of opgen, for
// its development builds), and recorded as a tool. A go.mod that already
// requires opgen keeps its version unless version is newer.
func AddTool(data []byte, version, replace string) ([]byte, error) {
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, fmt.Errorf("go.mod: %w", err)
	}
	if replace != "" {
		if err := f.AddReplace(Module, "", replace, ""); err != nil {
			return nil, err
		}
		version = replacedVersion
	}
	if version == "" {
		return nil, fmt.Errorf("this opgen is a development build with no version to require: pass --replace with the path of your opgen checkout")
	}
	if !requires(f, Module) || replace == "" {
		if err := f.AddRequire(Module, newer(f, version)); err != nil {
			return nil, err
		}
	}
	if err := f.AddTool(Tool); err != nil {
		return nil, err
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

func requires(f *modfile.File, path string) bool {
	for _, r := range f.Require {
		if r.Mod.Path == path {
			return true
		}
	}
	return false
}

// newer returns the version f requires of opgen when it is newer than v,
// else v.
func newer(f *modfile.File, v string) string {
	for _, r := range f.Require {
		if r.Mod.Path == Module && semver.Compare(v, r.Mod.Version) < 0 {
			return r.Mod.Version
		}
	}
	return v
}

// EnvtestPins returns the Makefile variables that kubebuilder's Makefile
// derives from go.mod and that adopting opgen moved, with the values
// before: ENVTEST_VERSION (setup-envtest's version, controller-runtime's)
// and ENVTEST_K8S_VERSION (the Kubernetes minor version of the test
// binaries, k8s.io/api's). setup-envtest is released with each
// controller-runtime minor release, not with every patch release opgen's
// go.mod may carry, and the test binaries follow the project's API.
func EnvtestPins(before, after []byte) (map[string]string, error) {
	old, err := modfile.Parse("go.mod", before, nil)
	if err != nil {
		return nil, err
	}
	updated, err := modfile.Parse("go.mod", after, nil)
	if err != nil {
		return nil, err
	}
	version := func(f *modfile.File, path string) string {
		for _, r := range f.Require {
			if r.Mod.Path == path {
				return r.Mod.Version
			}
		}
		return ""
	}
	pins := map[string]string{}
	if was, now := version(old, "sigs.k8s.io/controller-runtime"), version(updated, "sigs.k8s.io/controller-runtime"); was != "" && was != now {
		pins["ENVTEST_VERSION"] = was
	}
	if was, now := version(old, "k8s.io/api"), version(updated, "k8s.io/api"); was != "" && semver.MajorMinor(was) != semver.MajorMinor(now) {
		if _, minor, ok := strings.Cut(semver.MajorMinor(was), "."); ok {
			pins["ENVTEST_K8S_VERSION"] = "1." + minor
		}
	}
	return pins, nil
}

// Moved lists the requirements whose versions differ between the go.mod
// files before and after (what go mod tidy moved once opgen joined the
// module graph): a direct requirement as "path old => new", the indirect
// ones counted in one line.
func Moved(before, after []byte) ([]string, error) {
	old, err := modfile.Parse("go.mod", before, nil)
	if err != nil {
		return nil, err
	}
	updated, err := modfile.Parse("go.mod", after, nil)
	if err != nil {
		return nil, err
	}
	was := map[string]string{}
	for _, r := range old.Require {
		was[r.Mod.Path] = r.Mod.Version
	}
	var out []string
	indirect := 0
	for _, r := range updated.Require {
		v, ok := was[r.Mod.Path]
		switch {
		case ok && v == r.Mod.Version, r.Mod.Path == Module:
		case r.Indirect:
			indirect++
		case ok:
			out = append(out, fmt.Sprintf("%s %s => %s", r.Mod.Path, v, r.Mod.Version))
		default:
			out = append(out, fmt.Sprintf("%s %s (new)", r.Mod.Path, r.Mod.Version))
		}
	}
	if old.Go != nil && updated.Go != nil && old.Go.Version != updated.Go.Version {
		out = append(out, fmt.Sprintf("go %s => %s (opgen's module needs it)", old.Go.Version, updated.Go.Version))
	}
	if indirect > 0 {
		out = append(out, fmt.Sprintf("%d indirect requirements added or moved to newer versions", indirect))
	}
	return out, nil
}
