package webhooks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/gen/internal/gentest"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

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
