package controller

import (
	"context"
	storev1 "github.com/opgen-sdk/opgen/gen/testdata/webhooks/apis/store/v1"
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

// Default sets the defaults of a Gadget that is created or updated, in obj: the
// webhook answers with the JSON patch from the object it received to obj.
// It runs before validation (and before the API server's own), so what it
// sets is validated too. An error rejects the write.
func (w *GadgetWebhook) Default(ctx context.Context, obj *storev1.Gadget) error {
	return nil
}
