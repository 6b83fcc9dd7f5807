package promcheck

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// Probe is the kind of testdata/crd: a validating webhook refuses a Probe
// whose spec.mode is "reject", so that the webhook series have a request
// and a rejection to count.
type Probe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Mode string `json:"mode,omitempty"`
	} `json:"spec"`
}

func (p *Probe) DeepCopyObject() k8sruntime.Object {
	out := *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

var (
	probeGVR  = schema.GroupVersionResource{Group: "promcheck.opgen.dev", Version: "v1", Resource: "probes"}
	probeKind = runtime.Kind[*Probe]{GVK: probeGVR.GroupVersion().WithKind("Probe"), Resource: probeGVR.Resource, Namespaced: true}
)

type probeValidator struct{}

var _ webhook.Validator[*Probe] = probeValidator{}

func (probeValidator) ValidateCreate(_ context.Context, p *Probe) (webhook.Warnings, error) {
	if p.Spec.Mode == "reject" {
		return nil, errors.New("spec.mode reject is refused, as the test asks")
	}
	return nil, nil
}

func (v probeValidator) ValidateUpdate(ctx context.Context, _, p *Probe) (webhook.Warnings, error) {
	return v.ValidateCreate(ctx, p)
}
