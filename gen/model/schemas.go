package model

import (
	"sort"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/k8stags"
)

// schemas is controller-tools' CRD parser over the API packages, shared
// by everything a run derives from the CRDs: the model's check of which
// versions of a kind differ, the CRD manifests, the API reference and
// the samples. The parser caches every schema it builds, so each type is
// parsed once per run.
type schemas struct {
	parser *ctcrd.Parser
	pkgs   []*loader.Package
	kinds  []schema.GroupKind
}

// newSchemaSource returns the function that makes the API's CRD parser on
// first use, over the API packages of api.
func newSchemaSource(in Input, api *API) func() *schemas {
	return sync.OnceValue(func() *schemas {
		var pkgs []*loader.Package
		for _, v := range api.Versions() {
			if !v.NoCRD {
				pkgs = append(pkgs, v.Package)
			}
		}
		s := &schemas{
			parser: &ctcrd.Parser{
				Collector: in.Collector, Checker: in.Checker,
				AllowDangerousTypes:        in.Options.AllowDangerousTypes || !in.Options.StrictTypes,
				IgnoreUnexportedFields:     in.Options.IgnoreUnexportedFields,
				GenerateEmbeddedObjectMeta: in.Options.GenerateEmbeddedObjectMeta,
			},
			pkgs: pkgs,
		}
		ctcrd.AddKnownTypes(s.parser)
		for _, pkg := range pkgs {
			s.parser.NeedPackage(pkg)
		}
		if !in.Options.IgnoreK8sTags {
			k8stags.Amend(s.parser, pkgs)
		}
		if metav1 := ctcrd.FindMetav1(pkgs); metav1 != nil {
			s.kinds = ctcrd.FindKubeKinds(s.parser, metav1)
		}
		sort.Slice(s.kinds, func(i, j int) bool {
			if s.kinds[i].Group != s.kinds[j].Group {
				return s.kinds[i].Group < s.kinds[j].Group
			}
			return s.kinds[i].Kind < s.kinds[j].Kind
		})
		return s
	})
}

// schemaSource returns the API's CRD parser.
func (a *API) schemaSource() *schemas { return a.schemas() }

// crd returns the CRD of gk as controller-tools' parser builds it, full
// descriptions included, or false when the parser finds no version of it.
func (s *schemas) crd(gk schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, bool) {
	s.parser.NeedCRDFor(gk, nil)
	crd, ok := s.parser.CustomResourceDefinitions[gk]
	return &crd, ok
}

// CRDs returns the CRD of every kind of the API's packages (every type
// that embeds TypeMeta and ObjectMeta, as controller-gen finds them),
// sorted by group and kind, as controller-tools' CRD parser builds it:
// with full descriptions, before any cap (see gen/crd) and before
// controller-gen's clean-up for writing. The CRDs are built once per run
// and shared: callers must not modify them (DeepCopy first). It uses the
// shared packages: call it from a sequential generator or from Prepare.
func (a *API) CRDs() []*apiextensionsv1.CustomResourceDefinition {
	if a.schemas == nil {
		return nil // a model that was not built (Build panicked)
	}
	s := a.schemas()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, gk := range s.kinds {
		if crd, ok := s.crd(gk); ok {
			out = append(out, crd)
		}
	}
	return out
}
