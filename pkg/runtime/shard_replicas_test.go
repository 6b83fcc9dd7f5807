package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// Lease timings of the sharding tests: short, so that a crash is
// recovered from in seconds.
var shardElection = runtime.LeaderElectionOptions{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}

// runShardReplica runs one sharded replica until SIGTERM: a controller of
// Gadgets whose handler writes a line to the shared log when it starts and
// when it ends handling an object, takes 150ms, declares one ConfigMap, and
// asks to be reconciled again in 50ms.
func runShardReplica() int {
	id := os.Getenv(shardReplicaEnv)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "replica", id+":", err)
		return 1
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(shardConfigEnv))
	if err != nil {
		return fail(err)
	}
	logFile, err := os.OpenFile(os.Getenv(shardLogEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	// SIGTERM is caught from here on, and the test waits for the line
	// that says so before it may stop the replica.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	_, _ = fmt.Fprintf(logFile, "ready - %s %d\n", id, time.Now().UnixNano())
	ns := os.Getenv(shardNSEnv)
	le := shardElection
	le.Namespace, le.Identity = ns, id
	op, err := runtime.New(cfg, runtime.Options{
		Name: "shard-test", Namespaces: []string{ns}, Sharding: true, LeaderElection: le,
		MetricsAddr: "0", HealthAddr: "0", Logger: logr.Discard(), Workers: 8,
	})
	if err != nil {
		return fail(err)
	}
	kind, err := testapi.KindFor(op)
	if err != nil {
		return fail(err)
	}
	record := func(what, key string) {
		// One write of a short line to a file opened O_APPEND: whole.
		_, _ = fmt.Fprintf(logFile, "%s %s %s %d\n", what, key, id, time.Now().UnixNano())
	}
	h := plug.HandlerFuncs[*testapi.Gadget]{OnReconcile: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		record("start", a.Object.Name)
		defer record("end", a.Object.Name)
		// Long enough, and often enough, that a handover without the
		// drain would meet a handling in flight.
		time.Sleep(150 * time.Millisecond)
		a.RequeueAfter(50 * time.Millisecond)
		return configMaps(ctx, a)
	}}
	if _, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{configMapGVK},
	}); err != nil {
		return fail(err)
	}
	if err := op.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// shardReplica is a sharded replica process.
type shardReplica struct {
	id     string
	cmd    *exec.Cmd
	killed time.Time // when SIGKILL returned; zero otherwise
	done   chan error
}

type replicaSet struct {
	t       *testing.T
	ns, log string
	next    int
	mu      sync.Mutex
	all     []*shardReplica
}

func (s *replicaSet) start() *shardReplica {
	s.t.Helper()
	s.next++
	r := &shardReplica{id: fmt.Sprintf("replica-%d", s.next), done: make(chan error, 1)}
	r.cmd = exec.Command(os.Args[0], "-test.run=^$")
	r.cmd.Env = append(os.Environ(), shardReplicaEnv+"="+r.id, shardConfigEnv+"="+env.Kubeconfig, shardNSEnv+"="+s.ns, shardLogEnv+"="+s.log)
	r.cmd.Stderr = os.Stderr
	require.NoError(s.t, r.cmd.Start())
	go func() { r.done <- r.cmd.Wait() }()
	s.mu.Lock()
	s.all = append(s.all, r)
	s.mu.Unlock()
	s.t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	eventually(s.t, r.id+" catching SIGTERM", func() bool {
		data, err := os.ReadFile(s.log)
		return err == nil && strings.Contains(string(data), "ready - "+r.id+" ")
	})
	return r
}

func (s *replicaSet) kill(r *shardReplica) {
	s.t.Helper()
	require.NoError(s.t, r.cmd.Process.Signal(syscall.SIGKILL))
	<-r.done
	r.done <- nil // for the cleanup
	r.killed = time.Now()
}

func (s *replicaSet) stop(r *shardReplica) {
	s.t.Helper()
	require.NoError(s.t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-r.done:
		assert.NoError(s.t, err, "%s exits cleanly on SIGTERM", r.id)
		r.done <- nil
	case <-time.After(60 * time.Second):
		s.t.Fatalf("%s did not exit within 60s of SIGTERM", r.id)
	}
}

// interval is one handling of an object by one replica; a replica killed
// while handling ends its interval when it was killed.
type interval struct {
	member     string
	start, end int64
}

// handlings reads the shared log: the intervals of every object.
func (s *replicaSet) handlings() map[string][]interval {
	s.t.Helper()
	f, err := os.Open(s.log)
	require.NoError(s.t, err)
	defer f.Close()
	killed := map[string]int64{}
	s.mu.Lock()
	for _, r := range s.all {
		if !r.killed.IsZero() {
			killed[r.id] = r.killed.UnixNano()
		}
	}
	s.mu.Unlock()
	open := map[[2]string]int64{}
	out := map[string][]interval{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			continue // a line cut by a kill
		}
		at, err := strconv.ParseInt(fields[3], 10, 64)
		require.NoError(s.t, err)
		k := [2]string{fields[1], fields[2]}
		switch fields[0] {
		case "start":
			open[k] = at
		case "end":
			out[k[0]] = append(out[k[0]], interval{member: k[1], start: open[k], end: at})
			delete(open, k)
		}
	}
	for k, start := range open {
		end, ok := killed[k[1]]
		if !ok {
			end = time.Now().UnixNano() // still running
		}
		out[k[0]] = append(out[k[0]], interval{member: k[1], start: start, end: end})
	}
	return out
}

// lastFirstHandling returns the latest, over the objects, of the first
// handling that began after since: when the last object was handled again.
func lastFirstHandling(handled map[string][]interval, since time.Time) time.Time {
	var last int64
	for _, ivs := range handled {
		first := int64(0)
		for _, iv := range ivs {
			if iv.start > since.UnixNano() && (first == 0 || iv.start < first) {
				first = iv.start
			}
		}
		last = max(last, first)
	}
	return time.Unix(0, last)
}

// handledBy reports whether ivs has a whole handling by owner that began
// after since.
func handledBy(ivs []interval, owner string, since time.Time) bool {
	for _, iv := range ivs {
		if iv.member == ownerID(owner) && iv.start > since.UnixNano() && iv.end > iv.start {
			return true
		}
	}
	return false
}

// ownerID maps a member name back to the replica identity of the log.
func ownerID(member string) string {
	i := strings.LastIndex(member, "-")
	if i < 0 {
		return member
	}
	return member[:i]
}

// leaderOf returns the replica that holds the leader's Lease.
func leaderOf(t *testing.T, live map[*shardReplica]bool, ns string) *shardReplica {
	t.Helper()
	var leader *shardReplica
	eventually(t, "a leader among the live replicas", func() bool {
		l, err := env.Clientset().CoordinationV1().Leases(ns).Get(context.Background(), "shard-test", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		for r := range live {
			if r.id == *l.Spec.HolderIdentity {
				leader = r
			}
		}
		return leader != nil
	})
	return leader
}

// anyOtherThan returns one of the replicas other than r.
func anyOtherThan(live map[*shardReplica]bool, r *shardReplica) *shardReplica {
	for o := range live {
		if o != r {
			return o
		}
	}
	return nil
}

// anyOf returns one of the replicas.
func anyOf(live map[*shardReplica]bool) *shardReplica {
	for r := range live {
		return r
	}
	return nil
}
