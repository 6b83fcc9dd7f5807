package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// owners is the handler of Gadgets that own a ConfigMap in another
// cluster: the one their spec.message names (default east).
type owners struct {
	j        *journal
	children **fleet.Owned
}

func (h owners) Reconcile(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	h.j.add(a.Cluster, a.Object.Name, "owner")
	where := a.Object.Spec.Message
	if where == "" {
		where = "east"
	}
	a.Object.Status.Phase = "owner in " + a.Cluster
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "child-of-" + a.Object.Name, Namespace: a.Object.Namespace},
		Data:       map[string]string{"owner": a.Object.Name},
	}
	return (*h.children).Declare(ctx, a.Cluster, a.Object, fleet.OwnedObject{Cluster: where, Object: cm})
}

func (h owners) Delete(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	h.j.add(a.Cluster, a.Object.Name, "owner-delete")
	return (*h.children).Delete(ctx, a.Object)
}

// childrenFleet returns a fleet of the home cluster (a member too) and
// east and west whose owners' controller runs in the home cluster only
// and whose counting controller (setup) in the members only.
func childrenFleet(t *testing.T, ns string, j *journal) *fleet.Fleet {
	t.Helper()
	var children *fleet.Owned
	ownerSetup := func(op *runtime.Operator) error {
		kind, err := testapi.KindFor(op)
		if err != nil {
			return err
		}
		return testkit.Register(op, kind, plug.Handler[*testapi.Gadget](owners{j: j, children: &children}), runtime.ControllerOptions[*testapi.Gadget]{Name: "owners"})
	}
	opts := runtime.Options{Name: "fleet-children", Namespaces: []string{ns}, LeaderElection: election(ns, "solo")}
	f, err := fleet.New(home.Config, fleet.Options{Options: opts, Clusters: fleet.Secrets{Namespace: ns}, HomeCluster: "home"},
		fleet.Setups(fleet.In(fleet.HomeOnly, ownerSetup), fleet.In(fleet.MembersOnly, setup(j, "member"))))
	require.NoError(t, err)
	children = f.NewOwned(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	return f
}

// child returns ConfigMap name in cluster e's ns, or nil when there is
// none.
func child(t *testing.T, e *testenv.Environment, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := e.Clientset().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return cm
}

// TestChildrenAcrossClusters: an owner in the home cluster declares a
// child in a member cluster. The owners' controller runs in the home
// cluster only and another controller in the members only. A child the
// owner moves to another cluster is deleted where it was; deleting the
// owner deletes its child, also when the owner was deleted while the
// operator was down, once it runs again.
func TestChildrenAcrossClusters(t *testing.T) {
	ns := home.Namespace(t)
	memberNamespace(t, ns)
	east, west := members["east"], members["west"]
	clusterSecret(t, ns, "east", east)
	clusterSecret(t, ns, "west", west)
	j := &journal{}
	stop := startFleet(t, childrenFleet(t, ns, j))
	ctx := context.Background()
	homeGadgets := gadgets(t, home).Gadgets(ns)

	created := createGadget(t, home, ns, "owner")
	testkit.Eventually(t, "the owner's child in east", func() bool { return child(t, east, ns, "child-of-owner") != nil })
	t.Logf("an owner in the home cluster: its child in east %v after its create", time.Since(created).Round(time.Millisecond))
	cm := child(t, east, ns, "child-of-owner")
	assert.Equal(t, "home", cm.Labels[fleet.OwnerClusterLabel])
	assert.Equal(t, "home/"+ns+"/owner", cm.Annotations[fleet.OwnerAnnotation])
	handledIn(t, east, ns, "g-east", "east", createGadget(t, east, ns, "g-east"))
	keys := j.keys()
	assert.Equal(t, []string{"owner"}, unique(keys["home/owner"]), "the owners' controller alone works in the home cluster")
	assert.Equal(t, []string{"member"}, unique(keys["east/g-east"]), "the members' controller alone works in east")
	assert.Nil(t, child(t, east, ns, "child-of-g-east"), "the owners' controller works in east")

	_, err := homeGadgets.Patch(ctx, "owner", types.MergePatchType, []byte(`{"spec":{"message":"west"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	testkit.Eventually(t, "the child moved from east to west", func() bool {
		return child(t, west, ns, "child-of-owner") != nil && child(t, east, ns, "child-of-owner") == nil
	})

	require.NoError(t, homeGadgets.Delete(ctx, "owner", metav1.DeleteOptions{}))
	testkit.Eventually(t, "the owner and its child in west gone", func() bool {
		_, err := homeGadgets.Get(ctx, "owner", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && child(t, west, ns, "child-of-owner") == nil
	})

	createGadget(t, home, ns, "owner2")
	testkit.Eventually(t, "the child of owner2 in east", func() bool { return child(t, east, ns, "child-of-owner2") != nil })
	stop()
	require.NoError(t, homeGadgets.Delete(ctx, "owner2", metav1.DeleteOptions{}))
	time.Sleep(time.Second) // what a garbage collector would need to act, had the child an owner reference it could follow
	owner2, err := homeGadgets.Get(ctx, "owner2", metav1.GetOptions{})
	require.NoError(t, err, "owner2 went without its finalizer's Delete")
	require.NotNil(t, owner2.DeletionTimestamp)
	require.NotNil(t, child(t, east, ns, "child-of-owner2"), "the child went with the operator down")
	restarted := time.Now()
	startFleet(t, childrenFleet(t, ns, j))
	testkit.Eventually(t, "owner2 and its child in east gone after the restart", func() bool {
		_, err := homeGadgets.Get(ctx, "owner2", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && child(t, east, ns, "child-of-owner2") == nil
	})
	t.Logf("owner2, deleted while the operator was down: its child in east deleted %v after the restart", time.Since(restarted).Round(time.Millisecond))
}

func unique(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}
