package universe

import (
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/loader"
)

// Tagged reports whether a comment line of any file of p is the tag
// +name=..., as kube_codegen.sh selects a generator's input packages (it
// greps every Go file for the tag).
func Tagged(p *loader.Package, name string) bool {
	p.NeedSyntax()
	for _, f := range p.Syntax {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if text, ok := strings.CutPrefix(c.Text, "//"); ok && strings.HasPrefix(strings.TrimSpace(text), "+"+name+"=") {
					return true
				}
			}
		}
	}
	return false
}

// HasPackageTag reports whether p's doc.go, where gengo reads package
// tags, sets the tag +name (to any value, false included).
func HasPackageTag(fset *token.FileSet, p *loader.Package, name string) bool {
	found := false
	eachPackageTag(fset, p, name, func(string) { found = true })
	return found
}

// PackageTag returns the values of the package tag +name=a,b in p's
// doc.go, where gengo reads package tags, each value once, in order; the
// value "false" is left out.
func PackageTag(fset *token.FileSet, p *loader.Package, name string) []string {
	var out []string
	eachPackageTag(fset, p, name, func(value string) {
		for _, v := range strings.Split(value, ",") {
			if v = strings.TrimSpace(v); v != "" && v != "false" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	})
	return out
}

// eachPackageTag calls fn with the value of every line of p's doc.go that
// sets the tag +name.
func eachPackageTag(fset *token.FileSet, p *loader.Package, name string, fn func(value string)) {
	p.NeedSyntax()
	for _, f := range p.Syntax {
		if filepath.Base(fset.Position(f.FileStart).Filename) != "doc.go" {
			continue
		}
		for _, g := range f.Comments {
			for _, line := range strings.Split(g.Text(), "\n") {
				if value, ok := strings.CutPrefix(strings.TrimSpace(line), "+"+name+"="); ok {
					fn(value)
				}
			}
		}
	}
}

// Find returns the packages of paths among roots and every package they
// import, by path, and the paths it did not find.
func Find(roots []*loader.Package, paths []string) (map[string]*loader.Package, []string) {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	found := map[string]*loader.Package{}
	seen := map[*loader.Package]bool{}
	var visit func(p *loader.Package)
	visit = func(p *loader.Package) {
		if seen[p] || len(found) == len(want) {
			return
		}
		seen[p] = true
		if want[p.PkgPath] {
			found[p.PkgPath] = p
		}
		for _, imp := range p.Imports() {
			visit(imp)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	var missing []string
	for _, p := range paths {
		if found[p] == nil && !slices.Contains(missing, p) {
			missing = append(missing, p)
		}
	}
	return found, missing
}

// PackageTagPos returns where p's doc.go first sets the tag +name, or
// false when it does not.
func PackageTagPos(fset *token.FileSet, p *loader.Package, name string) (token.Position, bool) {
	p.NeedSyntax()
	for _, f := range p.Syntax {
		if filepath.Base(fset.Position(f.FileStart).Filename) != "doc.go" {
			continue
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), "+"+name+"=") {
					return fset.Position(c.Pos()), true
				}
			}
		}
	}
	return token.Position{}, false
}
