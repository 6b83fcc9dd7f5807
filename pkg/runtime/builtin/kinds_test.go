package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/opgen-sdk/opgen/internal/builtinkinds"
)

// TestKindsMatchTheAPIServer: every entry of the table names a kind the
// API server serves, with that resource and scope.
func TestKindsMatchTheAPIServer(t *testing.T) {
	t.Parallel()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	groups, err := restmapper.GetAPIGroupResources(dc)
	require.NoError(t, err)
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	require.NotEmpty(t, builtinkinds.Builtin)
	for _, k := range builtinkinds.Builtin {
		t.Run(k.Marker, func(t *testing.T) {
			m, err := mapper.RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind}, k.Version)
			require.NoError(t, err)
			assert.Equal(t, k.Resource, m.Resource.Resource)
			assert.Equal(t, k.Namespaced, m.Scope.Name() == meta.RESTScopeNameNamespace)
		})
	}
}
