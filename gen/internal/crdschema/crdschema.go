// Package crdschema builds the CRDs of a run's kinds in memory, for the
// generators that render something else from their schema.
package crdschema

import (
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"

	"github.com/opgen-sdk/opgen/gen"
)

// Build parses the project's kinds into CRDs as the crd generator
// does, sorted by group and kind. It uses the shared packages: call it
// from a sequential generator.
func Build(ctx *gen.Context) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	parser := &ctcrd.Parser{
		Collector:           ctx.Collector,
		Checker:             ctx.Checker,
		AllowDangerousTypes: ctx.Project.AllowDangerousTypes,
	}
	ctcrd.AddKnownTypes(parser)
	roots := ctx.API.Packages()
	for _, root := range roots {
		parser.NeedPackage(root)
	}
	metav1 := ctcrd.FindMetav1(roots)
	if metav1 == nil {
		return nil, nil
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, gk := range ctcrd.FindKubeKinds(parser, metav1) {
		parser.NeedCRDFor(gk, nil)
		crd := parser.CustomResourceDefinitions[gk]
		out = append(out, &crd)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Spec.Group != out[j].Spec.Group {
			return out[i].Spec.Group < out[j].Spec.Group
		}
		return out[i].Spec.Names.Kind < out[j].Spec.Names.Kind
	})
	return out, nil
}
