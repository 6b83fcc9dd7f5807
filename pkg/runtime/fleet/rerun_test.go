package fleet_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// TestMainRunsAgainAfterALostLease: fleet.Main, like runtime.Main, runs
// the fleet again as a candidate when it lost its Lease with every
// handler returned, instead of exiting; it leads again once the Lease is
// free, and the member clusters are worked in again.
func TestMainRunsAgainAfterALostLease(t *testing.T) {
	ns := home.Namespace(t)
	memberNamespace(t, ns)
	east := members["east"]
	clusterSecret(t, ns, "east", east)
	logs := &lines{}
	opts := fleet.Options{
		Options: runtime.Options{Name: "fleet-main", Namespaces: []string{ns}, LeaderElection: election(ns, "solo"),
			MetricsAddr: "0", HealthAddr: "0", Webhook: runtime.WebhookOptions{Addr: "0"},
			Logger: funcr.New(func(prefix, args string) { logs.add(prefix + " " + args); t.Log(prefix, args) }, funcr.Options{})},
		Clusters: fleet.Secrets{Namespace: ns},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- fleet.RunMain(ctx, flag.NewFlagSet("fleet", flag.ContinueOnError), []string{"--kubeconfig", home.Kubeconfig}, opts, setup(&journal{}, "solo"))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("fleet.Main did not return within 60s of its cancel")
		}
	})
	handledIn(t, east, ns, "g1", "east", createGadget(t, east, ns, "g1"))

	leases := home.Clientset().CoordinationV1().Leases(ns)
	require.NoError(t, retryOnConflict(func() error {
		lease, err := leases.Get(ctx, "fleet-main", metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec.HolderIdentity, lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds = ptr.To("thief"), &now, ptr.To[int32](3)
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	}))
	testkit.Eventually(t, "the fleet running again as a candidate", func() bool {
		return logs.has("running the fleet again as a candidate")
	})
	select {
	case err := <-done:
		t.Fatalf("fleet.Main returned after it lost its Lease: %v", err)
	default:
	}
	took := handledIn(t, east, ns, "g2", "east", createGadget(t, east, ns, "g2"))
	t.Logf("a Gadget created in east once the fleet ran again was handled %v later (the thief's Lease lasts 3 s)", took.Round(time.Millisecond))
}

func retryOnConflict(f func() error) error {
	var err error
	for range 10 {
		if err = f(); err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}
