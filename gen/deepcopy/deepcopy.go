// Package deepcopy generates zz_generated.deepcopy.go, the DeepCopy,
// DeepCopyInto and DeepCopyObject methods every Kubernetes object needs,
// with controller-tools' object generator on the run's shared packages. It
// reads the same markers as controller-gen: +kubebuilder:object:root,
// +kubebuilder:object:generate and +k8s:deepcopy-gen.
package deepcopy

import (
	ctdeepcopy "sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
)

// Generator writes zz_generated.deepcopy.go into every package that asks
// for deep copies.
type Generator struct{}

var _ gen.Generator = Generator{}

// RegisterMarkers registers the object generator's markers.
func (Generator) RegisterMarkers(into *markers.Registry) error {
	return ctdeepcopy.Generator{}.RegisterMarkers(into)
}

// CheckFilter limits type-checking to what the object generator needs.
func (Generator) CheckFilter() loader.NodeFilter { return ctdeepcopy.Generator{}.CheckFilter() }

// Generate runs the object generator.
func (Generator) Generate(ctx *gen.Context) error {
	return ctdeepcopy.Generator{}.Generate(ctx.GenerationContext(""))
}
