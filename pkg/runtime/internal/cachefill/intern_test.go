package cachefill

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInternObject checks that the transform leaves the objects' values as
// decoded and that two objects share their repeated strings, in the
// metadata and in the spec.
func TestInternObject(t *testing.T) {
	ctx := Fill(context.Background())
	stream := decodeWatch(t, 3, true)
	want, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", true))
	require.NoError(t, err)
	got, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", true))
	require.NoError(t, err)
	for i := range got {
		got[i].OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"}}
		want[i].OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"}}
		_, err := trimOwn(got[i], "opgen-load")
		require.NoError(t, err)
	}
	cached(t, want, false) // the same transform, for the managedFields
	require.Equal(t, want, got, "interning changes no value")

	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	a, b := got[1], got[2]
	require.True(t, same(a.Namespace, b.Namespace), "namespace")
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 {
				require.True(t, same(k, k2), "label key %s", k)
			}
		}
	}
	require.True(t, same(a.Labels["tier"], b.Labels["tier"]), "label value")
	require.True(t, same(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind), "owner kind")
	require.True(t, same(a.Spec.Image, b.Spec.Image), "spec string")
	require.True(t, same(a.Spec.Env[3].Name, b.Spec.Env[3].Name), "string in a slice of structs")
	require.True(t, same(a.Spec.Command[1], b.Spec.Command[1]), "string in a slice")
	require.True(t, same(a.ManagedFields[0].Manager, b.ManagedFields[0].Manager), "managedFields head")
	require.False(t, same(a.Spec.Description, b.Spec.Description), "strings over internMax stay apart")
	require.False(t, same(a.Name, b.Name))
}
