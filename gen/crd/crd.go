// Package crd generates the CustomResourceDefinitions of the project's
// kinds into config/crd/<group>_<plural>.yaml, with controller-tools' CRD
// generator on the run's shared packages. Every kubebuilder validation,
// default, CEL (XValidation), printcolumn, resource, subresource,
// storageversion and multi-version marker works as with controller-gen.
package crd

import (
	"k8s.io/utils/ptr"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
)

// Generator writes one CRD manifest per kind.
type Generator struct{}

var _ gen.Generator = Generator{}

func (Generator) ct() ctcrd.Generator {
	// The tool-version annotation would name controller-gen, which did
	// not run; the schema does not depend on it.
	return ctcrd.Generator{OmitToolVersion: ptr.To(true)}
}

// RegisterMarkers registers the CRD markers.
func (g Generator) RegisterMarkers(into *markers.Registry) error { return g.ct().RegisterMarkers(into) }

// CheckFilter limits type-checking to what the CRD generator needs.
func (g Generator) CheckFilter() loader.NodeFilter { return g.ct().CheckFilter() }

// Generate writes the CRDs; stale generated manifests in the CRD
// directory (its *.yaml files that carry opgen's header) are removed.
func (g Generator) Generate(ctx *gen.Context) error {
	dir := ctx.Project.CRDDir
	ctx.Output.OwnMatching(ctx.Project.Abs(dir), "*.yaml")
	ct := g.ct()
	ct.AllowDangerousTypes = ptr.To(ctx.Project.AllowDangerousTypes)
	return ct.Generate(ctx.GenerationContext(dir, ctx.API.Packages()))
}
