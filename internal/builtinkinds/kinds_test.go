package builtinkinds_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/internal/builtinkinds"
)

func TestBuiltinEntries(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, k := range builtinkinds.Builtin {
		assert.False(t, seen[k.Marker], "%s listed twice", k.Marker)
		seen[k.Marker] = true
		got, ok := builtinkinds.Lookup(k.Group, k.Version, k.Kind)
		assert.True(t, ok, k.Marker)
		assert.Equal(t, k, got)
	}
	pod, _ := builtinkinds.Lookup("", "v1", "Pod")
	assert.Equal(t, builtinkinds.Info{Marker: "v1.Pod", Func: "Pods", Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true,
		Package: "k8s.io/api/core/v1", Alias: "corev1", Clientset: "CoreV1"}, pod)
	np, _ := builtinkinds.Lookup("networking.k8s.io", "v1", "NetworkPolicy")
	assert.Equal(t, builtinkinds.Info{Marker: "networking.k8s.io/v1.NetworkPolicy", Func: "NetworkPolicies", Group: "networking.k8s.io", Version: "v1",
		Kind: "NetworkPolicy", Resource: "networkpolicies", Namespaced: true, Package: "k8s.io/api/networking/v1", Alias: "networkingv1",
		Clientset: "NetworkingV1"}, np)
	_, ok := builtinkinds.Lookup("apps", "v1", "Pod")
	assert.False(t, ok)
}
