package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// standbyOperator is an operator whose lease another replica holds for
// an hour: it never leads.
func standbyOperator(t *testing.T) *runtime.Operator {
	t.Helper()
	ns := env.Namespace(t)
	_, err := env.Clientset().CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "servers"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("the-leader"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "servers", MetricsAddr: "0", HealthAddr: "0", Logger: logr.FromSlogHandler(slog.DiscardHandler),
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns, Identity: "standby"},
	})
	require.NoError(t, err)
	return op
}

// TestServersRunOnEveryReplica: a server runs on a replica that does not
// lead, from Run until shutdown, unlike the leader's Runnables.
func TestServersRunOnEveryReplica(t *testing.T) {
	t.Parallel()
	op := standbyOperator(t)
	started, stopped := make(chan struct{}), make(chan struct{})
	require.NoError(t, op.AddReplicaRunnable(runtime.RunnableFunc(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		close(stopped)
		return nil
	})))
	leaderRan := make(chan struct{}, 1)
	require.NoError(t, op.AddLeaderRunnable(runtime.RunnableFunc(func(context.Context) error {
		leaderRan <- struct{}{}
		return nil
	})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Run returned before the server started: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("waiting 30s for the server to start on a replica that does not lead")
	}
	assert.False(t, op.Leading())
	select {
	case <-stopped:
		t.Fatal("the server stopped while Run runs")
	case <-leaderRan:
		t.Fatal("a leader's Runnable ran on the standby")
	default:
	}
	cancel()
	require.NoError(t, <-done)
	select {
	case <-stopped:
	default:
		t.Fatal("Run returned before the server's context ended and it returned")
	}
	assert.ErrorContains(t, op.AddReplicaRunnable(runtime.RunnableFunc(func(context.Context) error { return nil })), "add every Runnable before Run")
}

// TestServerFailureStopsRun: a server that fails (a port taken) stops the
// operator with its error.
func TestServerFailureStopsRun(t *testing.T) {
	t.Parallel()
	op := standbyOperator(t)
	require.NoError(t, op.AddReplicaRunnable(runtime.RunnableFunc(func(context.Context) error {
		return errors.New("listen on :9443: address already in use")
	})))
	assert.ErrorContains(t, op.AddReplicaRunnable(nil), "the Runnable is nil")
	done := make(chan error, 1)
	go func() { done <- op.Run(context.Background()) }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "runtime: server runtime.RunnableFunc stopped: listen on :9443: address already in use")
	case <-time.After(60 * time.Second):
		t.Fatal("waiting 60s for Run to return the server's error")
	}
}
