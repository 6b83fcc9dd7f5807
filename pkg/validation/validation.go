package validation

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"sort"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// Validator validates the objects of one kind in one version, as the API
// server that serves its CRD would.
type Validator struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator // nil when the schema has no CEL rules
	// statusSubresource is true when the server drops status on create.
	statusSubresource bool
}

// New returns the validator of crd's version, or an error when the
// version is not served or its schema is not one the server accepts.
func New(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name == version {
			return newValidator(crd, v)
		}
	}
	return nil, fmt.Errorf("CRD %s has no version %q", crd.Name, version)
}

func newValidator(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) (*Validator, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %s version %s has no schema; regenerate it with opgen generate", crd.Name, v.Name)
	}
	internal := &apiextensionsinternal.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("CRD %s version %s: convert the schema: %w", crd.Name, v.Name, err)
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s: the schema is not structural: %w", crd.Name, v.Name, err)
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, v.Name, err)
	}
	return &Validator{
		gvk:               schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind},
		structural:        structural,
		schema:            sv,
		cel:               cel.NewValidator(structural, true, celconfig.PerCallLimit),
		statusSubresource: v.Subresources != nil && v.Subresources.Status != nil,
	}, nil
}

// GroupVersionKind is the kind and version the validator checks.
func (v *Validator) GroupVersionKind() schema.GroupVersionKind { return v.gvk }

// Validate validates obj as the server validates a create: obj, typed or
// *unstructured.Unstructured, is converted, pruned and defaulted (obj
// itself is not changed), then checked. A nil or empty list means the
// server would accept it. The schema's errors come in field order, then
// the metadata, list and CEL checks' errors, as the server runs them.
func (v *Validator) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u, err := v.prepare(obj, true)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := apiservervalidation.ValidateCustomResource(nil, u.Object, v.schema)
	return v.validateRest(ctx, u, nil, byField(errs))
}

// ValidateUpdate validates obj as an update of old: transition rules see
// old as oldSelf, and errors that old already had are ratcheted as the
// server does.
func (v *Validator) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, err := v.prepare(obj, false)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	o, err := v.prepare(old, false)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	// The server's CRD validation ratcheting: an error of a value the
	// update leaves as it was is not reported, by the schema, the list
	// types or the CEL rules.
	correlated := common.NewCorrelatedObject(u.Object, o.Object, &model.Structural{Structural: v.structural})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, u.Object, o.Object, v.schema, apiservervalidation.WithRatcheting(correlated))
	return v.validateRest(ctx, u, o, byField(errs), cel.WithRatcheting(correlated))
}

// validateRest runs what follows the schema in the server's strategy.
func (v *Validator) validateRest(ctx context.Context, u, old *unstructured.Unstructured, errs field.ErrorList, celOptions ...cel.Option) field.ErrorList {
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	if old == nil || len(listtype.ValidateListSetsAndMaps(nil, v.structural, old.Object)) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	}
	if v.cel == nil {
		return errs
	}
	if hasBlocking(errs) {
		// The server skips CEL when the object is not well-typed, since
		// the rules would fail to evaluate on it, and says so.
		return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
	}
	var oldObj any
	if old != nil {
		oldObj = old.Object
	}
	celErrs, _ := v.cel.Validate(ctx, nil, v.structural, u.Object, oldObj, celconfig.RuntimeCELCostBudget, celOptions...)
	return append(errs, celErrs...)
}

// byField orders the schema's errors by field path. The schema validator
// walks properties in map order, so the server's order varies from call to
// call; a test that prints the errors wants one order.
func byField(errs field.ErrorList) field.ErrorList {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

func hasBlocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// Default returns obj as the server stores it on create: converted to
// unstructured, unknown fields pruned, defaults applied.
func (v *Validator) Default(obj runtime.Object) (*unstructured.Unstructured, error) {
	return v.prepare(obj, true)
}

// prepare converts obj, fills an empty apiVersion and kind with the
// validator's, prunes and defaults as the server's decoding does.
func (v *Validator) prepare(obj runtime.Object, create bool) (*unstructured.Unstructured, error) {
	u, err := v.convert(obj)
	if err != nil {
		return nil, err
	}
	if create && v.statusSubresource {
		delete(u.Object, "status")
	}
	structuralpruning.Prune(u.Object, v.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, v.structural)
	structuraldefaulting.Default(u.Object, v.structural)
	return u, nil
}

// convert returns a deep copy of obj as unstructured, with the
// validator's kind when obj has none.
func (v *Validator) convert(obj runtime.Object) (*unstructured.Unstructured, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, errors.New("validate a nil object")
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T to unstructured: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(content)}
	if u.GetAPIVersion() == "" && u.GetKind() == "" {
		u.SetGroupVersionKind(v.gvk)
	}
	if gvk := u.GroupVersionKind(); gvk != v.gvk {
		return nil, fmt.Errorf("object is a %s, the validator checks %s", gvk, v.gvk)
	}
	return u, nil
}

// Set holds the validators of every kind and version of some CRDs.
type Set struct {
	byGVK map[schema.GroupVersionKind]*Validator
}

// Load reads the CRD manifests in dirs (a project's config/crd) and
// returns a validator for each served version of each.
func Load(dirs ...string) (*Set, error) {
	var all []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range dirs {
		crds, err := testenv.ReadCRDs(dir)
		if err != nil {
			return nil, err
		}
		all = append(all, crds...)
	}
	return NewSet(all...)
}

// NewSet returns the validators of every served version of crds.
func NewSet(crds ...*apiextensionsv1.CustomResourceDefinition) (*Set, error) {
	s := &Set{byGVK: map[schema.GroupVersionKind]*Validator{}}
	var errs []error
	for _, crd := range crds {
		for i := range crd.Spec.Versions {
			if !crd.Spec.Versions[i].Served {
				continue
			}
			v, err := newValidator(crd, &crd.Spec.Versions[i])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.byGVK[v.gvk] = v
		}
	}
	return s, errors.Join(errs...)
}

// For returns the validator of gvk, or nil.
func (s *Set) For(gvk schema.GroupVersionKind) *Validator { return s.byGVK[gvk] }

// Kinds lists the kinds and versions of the set, sorted.
func (s *Set) Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(s.byGVK))
	for gvk := range s.byGVK {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Validate validates obj with the validator of its kind (see
// Validator.Validate). A typed object with an empty TypeMeta is matched
// by its Go type's name, which must name one kind in one version.
func (s *Set) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	v, err := s.lookup(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return v.Validate(ctx, obj)
}

// ValidateUpdate validates obj as an update of old (see
// Validator.ValidateUpdate).
func (s *Set) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	v, err := s.lookup(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return v.ValidateUpdate(ctx, obj, old)
}

func (s *Set) lookup(obj runtime.Object) (*Validator, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, errors.New("validate a nil object")
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		if v := s.byGVK[gvk]; v != nil {
			return v, nil
		}
		return nil, fmt.Errorf("no CRD serves %s; known: %v", gvk, s.Kinds())
	}
	// Generated API packages are named after their version
	// (apis/<group>/<version>), so the package path picks the version.
	t := reflect.TypeOf(obj).Elem()
	kind, version := t.Name(), path.Base(t.PkgPath())
	var found []*Validator
	for _, v := range s.byGVK {
		if v.gvk.Kind == kind && v.gvk.Version == version {
			found = append(found, v)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("no CRD serves kind %s in version %s (the name of %s's package); set the object's apiVersion and kind, or load its CRD; known: %v", kind, version, t, s.Kinds())
	}
	return nil, fmt.Errorf("kind %s %s is served by several groups; set the object's apiVersion and kind", version, kind)
}

// ToUnstructured converts obj as Validate sees it before pruning: a typed
// object with an empty TypeMeta gets the apiVersion and kind of its
// validator. It is what to send to a server to compare.
func (s *Set) ToUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	v, err := s.lookup(obj)
	if err != nil {
		return nil, err
	}
	return v.convert(obj)
}
