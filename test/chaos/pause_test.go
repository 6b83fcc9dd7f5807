package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestPausedLeaderWritesNothing: two writer replicas (a 3s lease, renewed
// within 2s); the leader is stopped with SIGSTOP for 1.5 times the lease
// while the Gadgets change, so that the other replica leads and writes
// their status; then it is woken with SIGCONT. Its watches hand its
// workers the changes they buffered before its renew loop finds the lease
// gone: the fence must refuse each of their writes. Every write the API
// server stores from the wake on is watched: none may carry the woken
// replica's identity (a status it applied, or an Event). A paused leader
// once force-applied stale state over the new leader's and wrote Events
// after it lost the lease.
func TestPausedLeaderWritesNothing(t *testing.T) {
	rounds := 2
	if full() {
		rounds = 10
	}
	const lease, pause = 3 * time.Second, 4500 * time.Millisecond // pause: 1.5 leases
	ns := env.Namespace(t)
	replicas := newReplicaProcs(t, ns, "writer", filepath.Join(t.TempDir(), "journal"), replicaWrites+"=1")
	procs, start := replicas.procs, replicas.start
	start()
	start()
	ctx := context.Background()
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	client, err := testapi.NewForConfigAndClient(env.Config, hc)
	require.NoError(t, err)
	gadgets := client.Gadgets(ns)
	const n = 5
	for i := range n {
		_, err := gadgets.Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g%d", i)}, Spec: testapi.GadgetSpec{Message: "start"}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	leases := env.Clientset().CoordinationV1().Leases(ns)
	holder := func() string {
		l, err := leases.Get(ctx, "replica-operator", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	// status reports whether every Gadget's status is message, written by
	// the replica who.
	status := func(who, message string) bool {
		list, err := gadgets.List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != n {
			return false
		}
		for _, g := range list.Items {
			if g.Status.Phase != who+" "+message {
				return false
			}
		}
		return true
	}
	eventuallyWithin(t, "a leader to write every Gadget's status", time.Minute, func() bool { h := holder(); return h != "" && status(h, "start") })
	var stale []string
	for r := range rounds {
		victim := holder()
		proc := procs[victim]
		require.NoError(t, proc.Process.Signal(syscall.SIGSTOP))
		paused := time.Now()
		message := fmt.Sprintf("round %d", r)
		// Changed while the leader is paused: its watches buffer them.
		for i := range n {
			g, err := gadgets.Get(ctx, fmt.Sprintf("g%d", i), metav1.GetOptions{})
			require.NoError(t, err)
			g.Spec.Message = message
			_, err = gadgets.Update(ctx, g, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
		var successor string
		eventuallyWithin(t, fmt.Sprintf("round %d: another replica to lead and write the changes while %s is paused", r, victim), 30*time.Second, func() bool {
			successor = holder()
			return successor != "" && successor != victim && status(successor, message)
		})
		time.Sleep(time.Until(paused.Add(pause)))
		// Everything stored from here on is watched (from the lists'
		// resourceVersions: a watch from none starts with what exists).
		gl, err := gadgets.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		gw, err := gadgets.Watch(ctx, metav1.ListOptions{ResourceVersion: gl.ResourceVersion})
		require.NoError(t, err)
		events := env.Clientset().EventsV1().Events(ns)
		el, err := events.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		ew, err := events.Watch(ctx, metav1.ListOptions{ResourceVersion: el.ResourceVersion})
		require.NoError(t, err)
		require.NoError(t, proc.Process.Signal(syscall.SIGCONT))
		woken := time.Now()
		// The woken replica finds the lease gone within a retry period
		// (500ms) and stops; 3s is six of them.
		stale = append(stale, watchFor(t, gw, ew, victim, 3*time.Second)...)
		gw.Stop()
		ew.Stop()
		t.Logf("round %d: %s paused %s, %s led; watched 3s from the wake (%s)", r, victim, pause, successor, woken.Format("15:04:05.000"))
		// The woken replica lost its term: its process ends; another takes
		// its place.
		_ = proc.Process.Kill()
		_ = proc.Wait()
		delete(procs, victim)
		start()
	}
	assert.Empty(t, stale, "writes of a woken leader that the API server stored")
	t.Logf("figures: %d rounds, each leader paused %s (lease %s) while %d Gadgets changed: %d writes of the woken replica stored, of them Events: %d", rounds, pause, lease, n, len(stale), countPrefix(stale, "Event"))
}

// watchFor collects, for d, every stored Gadget whose status names who,
// and every Event whose note does.
func watchFor(t *testing.T, gw, ew watch.Interface, who string, d time.Duration) []string {
	t.Helper()
	var out []string
	deadline := time.After(d)
	for {
		select {
		case <-deadline:
			return out
		case e, ok := <-gw.ResultChan():
			if !ok {
				t.Fatalf("the Gadgets' watch ended")
			}
			if g, ok := e.Object.(*testapi.Gadget); ok && strings.HasPrefix(g.Status.Phase, who+" ") {
				out = append(out, fmt.Sprintf("Gadget %s %s: status %q (resourceVersion %s)", g.Name, e.Type, g.Status.Phase, g.ResourceVersion))
			}
		case e, ok := <-ew.ResultChan():
			if !ok {
				t.Fatalf("the Events' watch ended")
			}
			if ev, ok := e.Object.(*eventsv1.Event); ok && strings.HasPrefix(ev.Note, who+" ") {
				out = append(out, fmt.Sprintf("Event %s %s: %q", ev.Name, e.Type, ev.Note))
			}
		}
	}
}

func countPrefix(s []string, prefix string) int {
	n := 0
	for _, x := range s {
		if strings.HasPrefix(x, prefix) {
			n++
		}
	}
	return n
}
