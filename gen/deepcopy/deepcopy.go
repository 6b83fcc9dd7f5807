// Package deepcopy generates zz_generated.deepcopy.go, the DeepCopy,
// DeepCopyInto and DeepCopyObject methods every Kubernetes object needs,
// with controller-tools' object generator on the run's shared packages. It
// reads the same markers as controller-gen: +kubebuilder:object:root,
// +kubebuilder:object:generate and +k8s:deepcopy-gen.
package deepcopy

import (
	"errors"
	"go/ast"

	"github.com/opgen-sdk/opgen/gen/model"

	ctdeepcopy "sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
)

// Generator writes zz_generated.deepcopy.go into every package that asks
// for deep copies.
type Generator struct{}

var (
	_ gen.Generator  = Generator{}
	_ gen.DeepCopier = Generator{}
)

// CopiesTypes says that the run writes deep copies.
func (Generator) CopiesTypes() {}

// RegisterMarkers registers the object generator's markers.
func (Generator) RegisterMarkers(into *markers.Registry) error {
	return ctdeepcopy.Generator{}.RegisterMarkers(into)
}

// CheckFilter limits type-checking to what the object generator needs.
func (Generator) CheckFilter() loader.NodeFilter { return ctdeepcopy.Generator{}.CheckFilter() }

// Generate runs the object generator.
func (Generator) Generate(ctx *gen.Context) error {
	var errs []error
	for _, root := range wanted(ctx) {
		skipInterfaces(ctx, root)
		errs = append(errs, generateOne(ctx, root))
	}
	return errors.Join(errs...)
}

// generateOne runs the object generator on one package, so that a panic
// of its traversal is reported at the package that caused it.
func generateOne(ctx *gen.Context, root *loader.Package) error {
	defer ctx.Recover("the deepcopy generator (controller-tools)", root)
	defer keepDeepCopyObject(ctx, root)()
	return ctdeepcopy.Generator{}.Generate(ctx.GenerationContext("", []*loader.Package{root}))
}

// keepDeepCopyObject stops the object generator from writing a
// DeepCopyObject method that the user wrote (common beside
// +k8s:deepcopy-gen:interfaces in code-generator projects), which would not
// compile twice: it marks those types +kubebuilder:object:root=false for
// the generator, which then writes DeepCopy and DeepCopyInto only. It
// returns the function that restores the markers.
func keepDeepCopyObject(ctx *gen.Context, pkg *loader.Package) func() {
	const name = "kubebuilder:object:root"
	own := model.HandWrittenDeepCopyObject(pkg)
	byNode, err := ctx.Collector.MarkersInPackage(pkg)
	if len(own) == 0 || err != nil {
		return func() {}
	}
	saved := map[*ast.TypeSpec][]any{}
	for _, file := range pkg.Syntax {
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok || !own[ts.Name.Name] {
					continue
				}
				if byNode[ts] == nil {
					byNode[ts] = markers.MarkerValues{}
				}
				saved[ts] = byNode[ts][name]
				byNode[ts][name] = []any{false}
			}
		}
	}
	return func() {
		for ts, v := range saved {
			if v == nil {
				delete(byNode[ts], name)
			} else {
				byNode[ts][name] = v
			}
		}
	}
}

// wanted returns the roots that ask for deep copies: with
// +kubebuilder:object:generate on the package (implied for API packages) or
// +kubebuilder:object:root or +kubebuilder:object:generate on a type. The
// object generator type-checks every root it is given, and the others
// (clients, controllers, commands) can be expensive to check.
func wanted(ctx *gen.Context) []*loader.Package {
	var out []*loader.Package
	for _, root := range ctx.Roots {
		if asks(ctx, root) {
			out = append(out, root)
		}
	}
	return out
}

func asks(ctx *gen.Context, pkg *loader.Package) bool {
	byNode, err := ctx.Collector.MarkersInPackage(pkg)
	if err != nil {
		return true // the generator reports the error
	}
	for _, values := range byNode {
		for _, name := range []string{"kubebuilder:object:generate", "kubebuilder:object:root", "k8s:deepcopy-gen"} {
			if values[name] != nil {
				return true
			}
		}
	}
	return false
}

// skipInterfaces marks the interface types of pkg with
// +kubebuilder:object:generate=false. The object generator recognizes an
// interface from its type-checked form, but the loader does not type-check
// what interfaces refer to (it checks only what the generators need), so an
// interface that embeds one from another package looks like any other type
// and would get DeepCopy methods. An explicit marker wins.
func skipInterfaces(ctx *gen.Context, pkg *loader.Package) {
	const name = "kubebuilder:object:generate"
	byNode, err := ctx.Collector.MarkersInPackage(pkg)
	if err != nil {
		return // reported with the package's errors
	}
	for _, file := range pkg.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if _, isIface := spec.Type.(*ast.InterfaceType); isIface && byNode[spec][name] == nil {
				if byNode[spec] == nil {
					byNode[spec] = markers.MarkerValues{}
				}
				byNode[spec][name] = []any{false}
			}
			return false
		})
	}
}
