package controller

import (
	"context"
	storev1 "github.com/opgen-sdk/opgen/gen/testdata/webhooks/apis/store/v1"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// GadgetWebhook admits Gadget objects (store.opgen.dev/v1): the API server calls it
// on every write of one, through the operator's webhook server, and the
// generated Setup registers it (see +opgen:webhook on Gadget).
//
// opgen wrote this file once and never overwrites it: it is yours. To give
// the webhook what it needs (typed cache readers, clients), declare
//
//	func NewGadgetWebhook(op *runtime.Operator) *GadgetWebhook
//
// and Setup builds it with that function instead of the zero value.
type GadgetWebhook struct{}

// ValidateCreate accepts or rejects a new Gadget. Return an error to reject it;
// apimachinery's field errors make kubectl show each field:
//
//	var errs field.ErrorList
//	if obj.Spec.Title == "" {
//		errs = append(errs, field.Required(field.NewPath("spec", "title"), "give the Gadget a title"))
//	}
//	if len(errs) > 0 {
//		return nil, apierrors.NewInvalid(storev1.SchemeGroupVersion.WithKind("Gadget").GroupKind(), obj.Name, errs)
//	}
//
// (field is k8s.io/apimachinery/pkg/util/validation/field). Warnings are
// shown to the client and do not reject.
func (w *GadgetWebhook) ValidateCreate(ctx context.Context, obj *storev1.Gadget) (webhook.Warnings, error) {
	return nil, nil
}

// ValidateUpdate accepts or rejects a change of a Gadget from old to obj,
// as ValidateCreate does; compare them to refuse changing a field.
//
// Deletions are not checked: the webhook is not called for them, so they
// go through while the operator is down. To refuse some, add
//
//	func (w *GadgetWebhook) ValidateDelete(ctx context.Context, obj *storev1.Gadget) (webhook.Warnings, error)
//
// and run go generate: the webhook is then called on DELETE as well, and a
// deletion waits for the operator (the webhook fails closed).
func (w *GadgetWebhook) ValidateUpdate(ctx context.Context, old, obj *storev1.Gadget) (webhook.Warnings, error) {
	return nil, nil
}

// Default sets the defaults of a Gadget that is created or updated, in obj: the
// webhook answers with the JSON patch from the object it received to obj.
// It runs before validation (and before the API server's own), so what it
// sets is validated too. An error rejects the write.
func (w *GadgetWebhook) Default(ctx context.Context, obj *storev1.Gadget) error {
	return nil
}
