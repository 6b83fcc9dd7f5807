package chaos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// A replica is this test binary run again as a child process with
// replicaEnv set: it runs an operator with leader election on a Lease in
// the namespace given, whose handler appends "<replica> <n>" to the
// journal file for every action (n counts the replica's own actions).
const (
	replicaEnv        = "OPGEN_CHAOS_REPLICA"
	replicaKubeconfig = "OPGEN_CHAOS_KUBECONFIG"
	replicaNamespace  = "OPGEN_CHAOS_NAMESPACE"
	replicaJournal    = "OPGEN_CHAOS_JOURNAL"
	// replicaWrites makes a replica a writer (pause_test.go): no periodic
	// reconcile, and each action writes the replica's identity and the
	// Gadget's spec into its status, and an Event that names both.
	replicaWrites = "OPGEN_CHAOS_WRITES"
)

// runReplica is a replica's main: it runs until SIGTERM (or SIGKILL).
func runReplica(id string) int {
	if err := replica(id); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func replica(id string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(replicaKubeconfig))
	if err != nil {
		return err
	}
	ns := os.Getenv(replicaNamespace)
	journal, err := os.OpenFile(os.Getenv(replicaJournal), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer journal.Close()
	op, err := runtime.New(cfg, runtime.Options{
		Name: "replica-operator", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns, Identity: id,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond},
	})
	if err != nil {
		return err
	}
	kind, err := testapi.KindFor(op)
	if err != nil {
		return err
	}
	if os.Getenv(replicaWrites) != "" {
		_, err = runtime.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{OnReconcile: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
			a.Object.Status.Phase = id + " " + a.Object.Spec.Message
			a.Normal("Seen", "%s saw %q", id, a.Object.Spec.Message)
			return nil
		}}), runtime.ControllerOptions[*testapi.Gadget]{})
		if err != nil {
			return err
		}
		op.Logger().Info("writer replica starting", "identity", id)
		return op.Run(ctx)
	}
	var n atomic.Int64
	_, err = runtime.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{OnReconcile: func(context.Context, *plug.Action[*testapi.Gadget]) error {
		// One write(2) of O_APPEND: lines of two processes never mix.
		_, err := fmt.Fprintf(journal, "%s %d\n", id, n.Add(1))
		return err
	}}), runtime.ControllerOptions[*testapi.Gadget]{ReconcileEvery: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	op.Logger().Info("replica starting", "identity", id)
	return op.Run(ctx)
}

// replicaProcs runs replicas of this test binary (runReplica) in ns, named
// prefix-0, prefix-1, ..., journaling to journal, with env added to their
// environment; their output goes to one log, shown when the test fails
// (or always with OPGEN_CHAOS_DEBUG set). procs holds the running ones.
type replicaProcs struct {
	t          *testing.T
	ns, prefix string
	journal    string
	env        []string
	logf       *os.File
	procs      map[string]*exec.Cmd
	next       int
}

func newReplicaProcs(t *testing.T, ns, prefix, journal string, env ...string) *replicaProcs {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "replicas.log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("OPGEN_CHAOS_DEBUG") != "" {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("replicas' log:\n%s", b)
			}
		}
	})
	return &replicaProcs{t: t, ns: ns, prefix: prefix, journal: journal, env: env, logf: logf, procs: map[string]*exec.Cmd{}}
}

// start starts the next replica; the test's end kills it (waking it
// first, should it be stopped).
func (r *replicaProcs) start() {
	id := fmt.Sprintf("%s-%d", r.prefix, r.next)
	r.next++
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+id, replicaKubeconfig+"="+env.Kubeconfig,
		replicaNamespace+"="+r.ns, replicaJournal+"="+r.journal)
	cmd.Env = append(cmd.Env, r.env...)
	cmd.Stdout, cmd.Stderr = r.logf, r.logf
	require.NoError(r.t, cmd.Start())
	r.procs[id] = cmd
	r.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// journalLines reads the journal: each line's replica and counter.
func journalLines(t *testing.T, path string) (ids []string, counts []int) {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, n, ok := strings.Cut(sc.Text(), " ")
		require.True(t, ok, "journal line %q", sc.Text())
		c, err := strconv.Atoi(n)
		require.NoError(t, err)
		ids, counts = append(ids, id), append(counts, c)
	}
	require.NoError(t, sc.Err())
	return ids, counts
}

// overlaps returns the replicas whose actions appear in two separate runs
// of the journal: they acted, another replica acted, then they acted
// again, so two replicas acted in overlapping terms (a replica never
// comes back: each process has its own identity).
func overlaps(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for i, id := range ids {
		if i > 0 && ids[i-1] == id {
			continue
		}
		if seen[id] {
			out = append(out, id)
		}
		seen[id] = true
	}
	return out
}

// TestReplicaKills: two replicas of an operator run as processes with
// leader election; the leader is killed with SIGKILL, a new replica
// started, for several rounds. Every action is journaled by the replica
// that ran it; no replica may act again once another one acted (no
// overlapping terms), and after each kill another replica takes over.
// Figures: the failover time of each kill (the lease holds for 3s after
// the leader's last renewal, as it is not released).
func TestReplicaKills(t *testing.T) {
	rounds := 3
	if full() {
		rounds = 20
	}
	ns := env.Namespace(t)
	journal := filepath.Join(t.TempDir(), "journal")
	replicas := newReplicaProcs(t, ns, "replica", journal)
	procs, start := replicas.procs, replicas.start
	start()
	start()
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	gadgets, err := testapi.NewForConfigAndClient(env.Config, hc)
	require.NoError(t, err)
	_, err = gadgets.Gadgets(ns).Create(context.Background(),
		&testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// leader is the replica that acted last, with its count of actions.
	leader := func() (string, int) {
		ids, counts := journalLines(t, journal)
		if len(ids) == 0 {
			return "", 0
		}
		return ids[len(ids)-1], counts[len(ids)-1]
	}
	// A leader is killed once it acted 10 times (half a second).
	const acts = 10
	eventuallyWithin(t, "a leader to act", time.Minute, func() bool { _, n := leader(); return n >= acts })
	var failovers []time.Duration
	for r := range rounds {
		victim, _ := leader()
		require.NoError(t, procs[victim].Process.Kill())
		_ = procs[victim].Wait()
		killed := time.Now()
		delete(procs, victim)
		start()
		eventuallyWithin(t, fmt.Sprintf("round %d: another replica to act after %s was killed", r, victim), 30*time.Second,
			func() bool { l, _ := leader(); return l != "" && l != victim })
		failovers = append(failovers, time.Since(killed).Round(10*time.Millisecond))
		eventuallyWithin(t, fmt.Sprintf("round %d: the new leader to act %d times", r, acts), 30*time.Second,
			func() bool { _, n := leader(); return n >= acts })
	}
	ids, counts := journalLines(t, journal)
	require.Empty(t, overlaps(ids), "replicas that acted again after another one acted")
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			require.Equal(t, counts[i-1]+1, counts[i], "journal of %s skips or repeats an action", ids[i])
		}
	}
	t.Logf("figures: %d kills, %d actions journaled, 0 overlapping terms; failover after each kill: %v", rounds, len(ids), failovers)
}

// TestOverlapDetector: the detector finds a replica that acts again after
// another one acted, and only that.
func TestOverlapDetector(t *testing.T) {
	require.Empty(t, overlaps([]string{"a", "a", "b", "b", "c"}))
	require.Equal(t, []string{"a"}, overlaps([]string{"a", "a", "b", "a", "c"}))
	require.Equal(t, []string{"b"}, overlaps([]string{"a", "b", "c", "b"}))
}
