package gen

// The load's package errors, positioned and explained, and which of them
// the run reports.

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// collectPackageErrors reports the Go errors of the loaded packages that
// matter to generation. The loader type-checks lazily and only what the
// generators ask for, so type errors are real only inside the type
// declarations of the root packages it checked (what it did not check
// stands in as empty packages); those are reported, as are all parse, list and
// generator errors of the API packages, the checked packages and their
// imports, and syntax errors anywhere (a package that does not parse may
// hide markers). Other errors of other packages, such as imports of code
// not generated yet or generated code that is stale until this run
// finishes, are left to the compiler.
func collectPackageErrors(ctx *Context) {
	api := map[*loader.Package]bool{}
	for _, v := range ctx.API.Versions() {
		api[v.Package] = true
	}
	seen := map[*loader.Package]bool{}
	var visit func(pkg *loader.Package, all bool, types ranges)
	visit = func(pkg *loader.Package, all bool, types ranges) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, e := range pkg.Errors {
			pos := parsePos(e.Pos)
			switch {
			case e.Kind == packages.TypeError && !types.contain(pos):
			case all || e.Kind == packages.ParseError || e.Kind == packages.TypeError:
				msg := explain(e)
				if pos.Filename == "" {
					msg = "package " + pkg.PkgPath + ": " + msg
					pos = packagePos(ctx, pkg)
				}
				if e.Kind == packages.TypeError || e.Kind == packages.ParseError {
					// The cause: what generators say on its line follows from it.
					ctx.Errors.Add(pos, "%s", msg)
				} else {
					ctx.Errors.AddLibrary(pos, msg)
				}
			}
		}
		if all {
			for _, imp := range pkg.Imports() {
				visit(imp, true, nil)
			}
		}
	}
	for _, root := range ctx.Roots {
		var types ranges
		if api[root] || generatesDeepCopy(ctx, root) {
			types = typeDeclRanges(ctx, root)
		}
		visit(root, api[root], types)
	}
}

// generatesDeepCopy reports whether pkg asks for deep copies with
// +kubebuilder:object:generate=true, which makes its types matter.
func generatesDeepCopy(ctx *Context, pkg *loader.Package) bool {
	pm, err := markers.PackageMarkers(ctx.Collector, pkg)
	if err != nil {
		return false
	}
	on, _ := pm.Get("kubebuilder:object:generate").(bool)
	return on
}

// packagePos is where pkg is declared: the package clause of its doc.go,
// or of its first file; the position of an error a library reported
// about the package as a whole.
func packagePos(ctx *Context, pkg *loader.Package) token.Position {
	var pos token.Position
	for _, f := range pkg.Syntax {
		p := ctx.Fset.Position(f.Package)
		if pos.Filename == "" || filepath.Base(p.Filename) == "doc.go" {
			pos = p
		}
	}
	if pos.Filename == "" && len(pkg.GoFiles) > 0 {
		pos = token.Position{Filename: pkg.GoFiles[0], Line: 1, Column: 1}
	}
	return pos
}

type lineRange struct {
	file       string
	start, end int
}

type ranges []lineRange

func (r ranges) contain(pos token.Position) bool {
	for _, lr := range r {
		if lr.file == pos.Filename && pos.Line >= lr.start && pos.Line <= lr.end {
			return true
		}
	}
	return false
}

// typeDeclRanges returns where pkg's type declarations are, when it was
// parsed.
func typeDeclRanges(ctx *Context, pkg *loader.Package) ranges {
	var out ranges
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				start, end := ctx.Fset.Position(gd.Pos()), ctx.Fset.Position(gd.End())
				out = append(out, lineRange{start.Filename, start.Line, end.Line})
			}
		}
	}
	return out
}

func explain(e packages.Error) string {
	// controller-tools names its own option; opgen's is a flag.
	e.Msg = strings.Replace(e.Msg, "re-run with crd:allowDangerousTypes=true", "run opgen generate with --allow-dangerous-types", 1)
	switch e.Kind {
	case packages.TypeError:
		return e.Msg + " (API types must compile before opgen can read them: fix this Go error; generated files are ignored while loading)"
	case packages.ParseError:
		return e.Msg + " (fix the syntax error: opgen reads markers from every package it is given)"
	}
	return e.Msg
}

// parsePos parses the "file:line:col" of a packages.Error.
func parsePos(s string) token.Position {
	s = strings.TrimSuffix(s, ":-")
	parts := strings.Split(s, ":")
	var pos token.Position
	var nums []int
	for len(parts) > 1 {
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		parts = parts[:len(parts)-1]
	}
	pos.Filename = strings.Join(parts, ":")
	if !strings.HasSuffix(pos.Filename, ".go") {
		return token.Position{} // a package, not a file: the message names it
	}
	if len(nums) > 0 {
		pos.Line = nums[0]
	}
	if len(nums) > 1 {
		pos.Column = nums[1]
	}
	return pos
}
