package admission_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/admission"
	"github.com/opgen-sdk/opgen/internal/gentest"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// TestGolden: the webhook golden project's configurations, a validating
// and a mutating webhook of a namespaced Widget and a mutating webhook of
// a cluster-scoped Gadget, which no namespace selector narrows.
func TestGolden(t *testing.T) {
	gentest.Golden(t, "../testdata/webhooks", func() map[string]gen.Generator {
		return map[string]gen.Generator{"webhooks": admission.Generator{}}
	})
}

// TestDeleteFollowsValidateDelete: the model reads the webhook types of
// the controller package: WidgetWebhook has ValidateDelete, so its
// validating webhook is registered for DELETE; GadgetWebhook (the stub)
// has none, so its is not.
func TestDeleteFollowsValidateDelete(t *testing.T) {
	t.Parallel()
	_, api := gentest.Model(t, "../testdata/webhooks")
	deletes := map[string]bool{}
	for _, h := range api.AdmissionHooks() {
		if h.Type == hooks.Validating {
			deletes[h.GVK.Kind] = h.Delete
		}
	}
	assert.Equal(t, map[string]bool{"Widget": true, "Gadget": false}, deletes)
}
