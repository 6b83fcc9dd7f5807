package webhook_test

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// Gizmo is a test kind served in two versions with different schemas:
// v1 (the hub, stored) has a state enum where v1alpha1 has a boolean.
var (
	gizmoV1       = schema.GroupVersion{Group: "whtest.opgen.dev", Version: "v1"}
	gizmoV1alpha1 = schema.GroupVersion{Group: "whtest.opgen.dev", Version: "v1alpha1"}
	gizmoHub      = gizmoV1.WithKind("Gizmo")
)

type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GizmoSpec `json:"spec"`
}

type GizmoSpec struct {
	Size  int32    `json:"size,omitempty"`
	Color string   `json:"color,omitempty"`
	State string   `json:"state,omitempty"` // Open or Done
	Tags  []string `json:"tags,omitempty"`
}

type GizmoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gizmo `json:"items"`
}

type GizmoAlpha struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GizmoAlphaSpec `json:"spec"`
}

type GizmoAlphaSpec struct {
	Size  int32    `json:"size,omitempty"`
	Color string   `json:"color,omitempty"`
	Done  bool     `json:"done,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type GizmoAlphaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GizmoAlpha `json:"items"`
}

func (g *Gizmo) DeepCopyObject() k8sruntime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Tags = append([]string(nil), g.Spec.Tags...)
	return &out
}

func (g *GizmoList) DeepCopyObject() k8sruntime.Object {
	out := *g
	out.Items = make([]Gizmo, len(g.Items))
	for i := range g.Items {
		out.Items[i] = *g.Items[i].DeepCopyObject().(*Gizmo)
	}
	return &out
}

func (g *GizmoAlpha) DeepCopyObject() k8sruntime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Tags = append([]string(nil), g.Spec.Tags...)
	return &out
}

func (g *GizmoAlphaList) DeepCopyObject() k8sruntime.Object {
	out := *g
	out.Items = make([]GizmoAlpha, len(g.Items))
	for i := range g.Items {
		out.Items[i] = *g.Items[i].DeepCopyObject().(*GizmoAlpha)
	}
	return &out
}

// gizmoScheme holds both versions and the conversions between v1alpha1
// and the hub, as a generated AddToScheme registers them.
func gizmoScheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	s.AddKnownTypeWithName(gizmoV1.WithKind("Gizmo"), &Gizmo{})
	s.AddKnownTypeWithName(gizmoV1.WithKind("GizmoList"), &GizmoList{})
	s.AddKnownTypeWithName(gizmoV1alpha1.WithKind("Gizmo"), &GizmoAlpha{})
	s.AddKnownTypeWithName(gizmoV1alpha1.WithKind("GizmoList"), &GizmoAlphaList{})
	metav1.AddToGroupVersion(s, gizmoV1)
	metav1.AddToGroupVersion(s, gizmoV1alpha1)
	must(s.AddConversionFunc((*GizmoAlpha)(nil), (*Gizmo)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*GizmoAlpha), b.(*Gizmo)
		in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		out.Spec = GizmoSpec{Size: in.Spec.Size, Color: in.Spec.Color, State: "Open", Tags: in.Spec.Tags}
		if in.Spec.Done {
			out.Spec.State = "Done"
		}
		return nil
	}))
	must(s.AddConversionFunc((*Gizmo)(nil), (*GizmoAlpha)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*Gizmo), b.(*GizmoAlpha)
		in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		out.Spec = GizmoAlphaSpec{Size: in.Spec.Size, Color: in.Spec.Color, Done: in.Spec.State == "Done", Tags: in.Spec.Tags}
		if in.Spec.Color == "panic" {
			panic("conversion of a panic-colored gizmo")
		}
		return nil
	}))
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

var gizmoKind = runtime.Kind[*Gizmo]{GVK: gizmoHub, Resource: "gizmos", Namespaced: true}

// gizmoWebhook validates and defaults Gizmos: size at most 10, no color
// "forbidden", a warning for a big size, and defaults color to "blue" and
// state to "Open". A message "panic" panics.
type gizmoWebhook struct{}

var (
	_ webhook.Validator[*Gizmo] = gizmoWebhook{}
	_ webhook.Defaulter[*Gizmo] = gizmoWebhook{}
)

func (gizmoWebhook) ValidateCreate(_ context.Context, g *Gizmo) (webhook.Warnings, error) {
	return validateGizmo(g)
}

func (gizmoWebhook) ValidateUpdate(_ context.Context, old, g *Gizmo) (webhook.Warnings, error) {
	if old.Spec.Color != "" && g.Spec.Color != old.Spec.Color {
		return nil, fmt.Errorf("spec.color is immutable (was %q)", old.Spec.Color)
	}
	return validateGizmo(g)
}

func (gizmoWebhook) ValidateDelete(_ context.Context, g *Gizmo) (webhook.Warnings, error) {
	if g.Labels["protected"] == "true" {
		return nil, apierrors.NewForbidden(schema.GroupResource{Group: gizmoHub.Group, Resource: "gizmos"}, g.Name, fmt.Errorf("the gizmo is protected"))
	}
	return nil, nil
}

func validateGizmo(g *Gizmo) (webhook.Warnings, error) {
	if strings.Contains(g.Spec.Color, "panic") {
		panic("validating a panic-colored gizmo")
	}
	var errs field.ErrorList
	if g.Spec.Size > 10 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "size"), g.Spec.Size, "must be at most 10"))
	}
	if g.Spec.Color == "forbidden" {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "color"), g.Spec.Color, []string{"blue", "red"}))
	}
	var warnings webhook.Warnings
	if g.Spec.Size > 5 {
		warnings = append(warnings, "spec.size above 5 is slow")
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(gizmoHub.GroupKind(), g.Name, errs)
	}
	return warnings, nil
}

func (gizmoWebhook) Default(_ context.Context, g *Gizmo) error {
	if g.Spec.Color == "" {
		g.Spec.Color = "blue"
	}
	if g.Spec.State == "" {
		g.Spec.State = "Open"
	}
	if g.Spec.Color == "panic-default" {
		panic("defaulting a panic-colored gizmo")
	}
	return nil
}
