package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestRegisterSaysWhatToFix: a registration that cannot work fails at
// Register, with the fix in the message. Register does not contact the API
// server, so these need none.
func TestRegisterSaysWhatToFix(t *testing.T) {
	op, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "op", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	require.NoError(t, err)
	cs, err := testapi.NewForConfigAndClient(op.RESTConfig(), op.HTTPClient())
	require.NoError(t, err)
	kind := testapi.Kind(cs)
	noop := plug.HandlerFuncs[*testapi.Gadget]{}
	tests := []struct {
		name string
		kind runtime.Kind[*testapi.Gadget]
		h    plug.Handler[*testapi.Gadget]
		opts runtime.ControllerOptions[*testapi.Gadget]
		want []string
	}{
		{"Steps with Pipeline", kind, noop, runtime.ControllerOptions[*testapi.Gadget]{
			Steps: []plug.Step[*testapi.Gadget]{plug.Logger[*testapi.Gadget]()},
			Pipeline: func(env plug.Env[*testapi.Gadget], h plug.Handler[*testapi.Gadget]) plug.Pipeline[*testapi.Gadget] {
				return plug.Default(env, h)
			},
		}, []string{"Steps", "Pipeline", "put the 1 steps into the pipeline that Pipeline returns"}},
		{"CacheSpec without Project", kind, noop, runtime.ControllerOptions[*testapi.Gadget]{CacheSpec: []string{"size"}},
			[]string{"CacheSpec without Project", "set Project to keep the same fields"}},
		{"CacheSpec not a path", kind, noop, runtime.ControllerOptions[*testapi.Gadget]{
			CacheSpec: []string{"size."}, Project: func(g *testapi.Gadget) { g.Spec = testapi.GadgetSpec{Size: g.Spec.Size} },
		}, []string{"CacheSpec", `"size." is not a dotted path of JSON names`}},
		{"nil handler", kind, nil, runtime.ControllerOptions[*testapi.Gadget]{}, []string{"handler is nil"}},
		{"no ListWatch", runtime.Kind[*testapi.Gadget]{GVK: kind.GVK, Resource: kind.Resource, Client: kind.Client}, noop,
			runtime.ControllerOptions[*testapi.Gadget]{}, []string{"lacks ListWatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := runtime.Register(op, tt.kind, tt.h, tt.opts)
			require.Error(t, err)
			assert.Nil(t, c)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	c, err := runtime.Register(op, kind, noop, runtime.ControllerOptions[*testapi.Gadget]{Name: "gadgets"})
	require.NoError(t, err)
	assert.NotNil(t, c, "Register returns the controller, for callers that read its cache")
}
