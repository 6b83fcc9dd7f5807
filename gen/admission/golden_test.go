package admission_test

import (
	"testing"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/admission"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestGolden: the webhook golden project's configurations, a validating
// and a mutating webhook of a namespaced Widget and a mutating webhook of
// a cluster-scoped Gadget, which no namespace selector narrows.
func TestGolden(t *testing.T) {
	gentest.Golden(t, "../testdata/webhooks", func() map[string]gen.Generator {
		return map[string]gen.Generator{"webhooks": admission.Generator{}}
	})
}
