package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Variants of the sharding benchmark: opgen with one leader, controller-
// runtime, and opgen sharded over 1, 2 and 4 replicas.
const (
	shardSingle = "opgen single leader"
	shardCR     = "cr"
)

func shardedVariant(k int) string { return fmt.Sprintf("opgen sharded x%d", k) }

// shardSizes are the replica counts of the sharded runs.
var shardSizes = []int{1, 2, 4}

// benchShard measures sharding over s.cfg.shardN objects, in 3 rounds (a
// round of 4 replicas over 30,000 objects takes minutes): for opgen with
// one leader, controller-runtime, and opgen sharded over 1, 2 and 4
// replicas, the time from the first process's start to every object
// reconciled once (no-op handler), and each replica's peak RSS and Go heap
// after GC once there. The first sharded round includes the sharder's
// labelling of every object with its bucket (one write each, once in the
// objects' life); the later rounds find them labelled. Sharded replicas
// keep stable identities (replica-0…), so the assignment of buckets of
// one round holds in the next (but for the buckets of the replica a crash
// added). In every round of 2 and 4 replicas, after those measurements,
// one replica is killed (SIGKILL), the leader and a member that does not
// lead in turn (shardCrash), and one is then added: the scale-up window is
// from the new replica's start to the last of the objects moved to it
// reconciled by it.
func (s *suite) benchShard(ctx context.Context) error {
	n := s.cfg.shardN
	nss := map[string]string{opgen: "opgen-shard", cr: "cr-shard"}
	if err := s.createNamespaces(ctx, nss[opgen], nss[cr]); err != nil {
		return err
	}
	t := time.Now()
	if err := s.populate(ctx, opgenGroup, nss[opgen], n); err != nil {
		return err
	}
	if err := s.populate(ctx, crGroup, nss[cr], n); err != nil {
		return err
	}
	logf("   created %d objects for each framework in %v", n, time.Since(t).Round(100*time.Millisecond))
	rounds := min(s.cfg.rounds, 3)
	single := func(p *proc) string {
		if p.variant == cr {
			return shardCR
		}
		return shardSingle
	}
	if err := s.shardRounds(single, rounds, func(r int) error {
		for _, v := range order(r, opgen, cr) {
			if err := s.shardSingleOnce(v, nss[framework(v)], n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	lease := s.leaseName("shard")
	for _, k := range shardSizes {
		v := shardedVariant(k)
		if err := s.shardRounds(func(*proc) string { return v }, rounds, func(r int) error {
			crash := ""
			if k >= 2 {
				crash = crashOf(r)
			}
			return s.shardOnce(ctx, k, nss[opgen], lease, n, crash)
		}); err != nil {
			return fmt.Errorf("%d replicas: %w", k, err)
		}
	}
	for _, v := range append([]string{shardSingle, shardCR}, shardedVariant(1), shardedVariant(2), shardedVariant(4)) {
		logf("   %s: first full reconcile %s s, heap per replica %s MiB", v,
			fmtSeries(s.res.get("shard.first.seconds", v)), fmtSeries(scaled(s.res.get("shard.heap.bytes", v), 1.0/(1<<20))))
	}
	return nil
}

// shardSpare is how many rounds of one kind the sharding benchmark may
// run again, in all, after an operator exited on its own in them.
const shardSpare = 2

// shardRounds runs rounds rounds of once. A round in which an operator
// exited on its own (a member that missed its lease's renew deadline
// under load exits, as it must) is recorded in the results, its values
// are dropped, and it runs again, up to shardSpare times: one exit does
// not cost the rows of every later round. label names the variant of the
// operator that exited.
func (s *suite) shardRounds(label func(*proc) string, rounds int, once func(round int) error) error {
	var start time.Time
	done, err := attemptRounds(rounds, shardSpare, func(r int) error {
		m := s.res.mark()
		start = time.Now()
		err := once(r)
		if err != nil {
			s.res.rollback(m)
		}
		return err
	}, func(e *exitError, attempt int) {
		x := newMemberExit(label(e.p), attempt, start, e)
		s.res.Exits = append(s.res.Exits, x)
		logf("   %s: %s exited on its own (%s) %.1fs after its start, %.1fs into attempt %d, while %s; load average %s; the round runs again%s",
			x.Variant, x.Identity, x.Status, x.AfterStart, x.IntoRound, attempt, x.While, x.Load, e.p.tail())
	})
	if err != nil {
		return err
	}
	if done < rounds {
		logf("   %d of %d rounds measured: operators exited on their own in the others (listed in the results)", done, rounds)
	}
	return nil
}

// attemptRounds runs once for round 0, 1, … until rounds rounds finished.
// A round in which an operator exited on its own is handed to exited and
// run again, up to spare times in all; any other error stops it. It
// returns how many rounds finished.
func attemptRounds(rounds, spare int, once func(round int) error, exited func(e *exitError, attempt int)) (int, error) {
	done := 0
	for attempt := 1; done < rounds && attempt <= rounds+spare; attempt++ {
		err := once(done)
		var ee *exitError
		switch {
		case err == nil:
			done++
		case errors.As(err, &ee):
			exited(ee, attempt)
		default:
			return done, err
		}
	}
	return done, nil
}

// memberExit is an operator of the sharding benchmark that exited on its
// own: which, when, while the harness waited for what, and its log's
// tail.
type memberExit struct {
	Variant  string `json:"variant"`
	Identity string `json:"identity,omitempty"`
	// Attempt counts the rounds of the variant run, from 1.
	Attempt    int      `json:"attempt"`
	While      string   `json:"while"`
	AfterStart float64  `json:"afterStartSeconds"`
	IntoRound  float64  `json:"intoRoundSeconds"`
	Status     string   `json:"status"`
	At         string   `json:"at"`
	Load       string   `json:"loadavg"`
	LogTail    []string `json:"logTail"`
}

func newMemberExit(variant string, attempt int, roundStart time.Time, e *exitError) memberExit {
	p := e.p
	status := "exit status 0"
	if p.waitErr != nil {
		status = p.waitErr.Error()
	}
	return memberExit{
		Variant: variant, Identity: p.identity, Attempt: attempt, While: e.while,
		AfterStart: p.exitAt.Sub(p.start).Seconds(), IntoRound: p.exitAt.Sub(roundStart).Seconds(),
		Status: status, At: p.exitAt.Format(time.RFC3339), Load: loadavg(), LogTail: p.tailLines(8),
	}
}

// exitsOf counts the recorded exits of variant.
func (r *results) exitsOf(variant string) int {
	n := 0
	for _, x := range r.Exits {
		if x.Variant == variant {
			n++
		}
	}
	return n
}

func scaled(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

// shardSingleOnce is a cold start of one leader over the n objects.
func (s *suite) shardSingleOnce(v, ns string, n int) error {
	name := shardSingle
	if v == cr {
		name = shardCR
	}
	p, err := s.startOperator(v, opts{namespace: ns, mode: "noop", workers: s.cfg.workers, expect: n,
		leader: true, leaseName: s.leaseName("shard-single"), lease: s.cfg.failover})
	if err != nil {
		return err
	}
	defer p.stop()
	all, err := p.waitAll(s.cfg.scaledTo(n, 3*time.Minute))
	if err != nil {
		return err
	}
	s.res.add("shard.first.seconds", name, all.Sub(p.start).Seconds())
	return s.shardMemory(name, []*proc{p})
}

// shardMemory records the largest peak RSS and heap of the replicas.
func (s *suite) shardMemory(v string, ps []*proc) error {
	time.Sleep(time.Second)
	var peak, heap float64
	for i, p := range ps {
		if dir := os.Getenv("BENCH_HEAP_PROFILES"); dir != "" {
			saveHeapProfile(p, filepath.Join(dir, fmt.Sprintf("shard-%s-%d.pprof", v, i)))
		}
		pk, _ := p.memory()
		st, err := p.stats(true)
		if err != nil {
			if exit := exitedOf(ps, "reading the replicas' memory"); exit != nil {
				return exit
			}
			return err
		}
		peak, heap = max(peak, pk), max(heap, float64(st.HeapBytes))
	}
	s.res.add("shard.peakrss.bytes", v, peak)
	s.res.add("shard.heap.bytes", v, heap)
	return nil
}

// shardOnce runs k sharded replicas until every object was reconciled once,
// measures them, and with a crash, kills one (the leader or a member that
// does not lead) and then adds one.
func (s *suite) shardOnce(ctx context.Context, k int, ns, lease string, n int, crash string) error {
	v := shardedVariant(k)
	start := func(i int) (*proc, error) {
		return s.startOperator(opgen, opts{namespace: ns, mode: "noop", workers: s.cfg.workers, trace: true,
			leader: true, leaseName: lease, identity: replicaIdentity(i), lease: s.cfg.failover,
			extraFlags: []string{"-sharding"}})
	}
	var ps []*proc
	defer func() {
		for _, p := range ps {
			p.stop()
		}
	}()
	for i := range k {
		p, err := start(i)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	first := ps[0].start
	done, err := waitUnion(ps, n, s.cfg.scaledTo(n, 3*time.Minute))
	if err != nil {
		return err
	}
	s.res.add("shard.first.seconds", v, done.Sub(first).Seconds())
	if err := s.shardMemory(v, ps); err != nil {
		return err
	}
	if crash == "" {
		return nil
	}
	rest, err := s.shardCrash(ctx, v, lease, ps, crash)
	ps = rest
	if err != nil {
		return err
	}
	// A replica added: its share is what it reconciled once no new
	// object came to it for quiet.
	added, err := start(k + 10)
	if err != nil {
		return err
	}
	ps = append(ps, added)
	// About 1/(k+1) of the buckets move to it, each once its member let
	// go of it.
	last, moved, err := waitQuiet(added, 3*time.Second, 2*time.Minute+time.Duration(n)*time.Millisecond)
	if err != nil {
		return fmt.Errorf("after the scale-up: %w", err)
	}
	s.res.add("shard.scaleup.seconds", v, last.Sub(added.start).Seconds())
	s.res.add("shard.scaleup.objects", v, float64(moved))
	return nil
}

// The replicas a crash kills: the leader (it also runs the sharder, so a
// new leader must be elected first) or a member that does not lead.
const (
	crashLeader = "leader"
	crashMember = "member"
)

// crashOf is the replica a round's crash kills: the leader and a member
// in turn, from round to round.
func crashOf(round int) string {
	if round%2 == 0 {
		return crashLeader
	}
	return crashMember
}

func replicaIdentity(i int) string { return "replica-" + strconv.Itoa(i) }

// shardCrash kills one of ps with SIGKILL, the leader or a member that does
// not lead, once the assignment settled (no handover under way), and
// measures from the kill until the sharder reassigned its buckets (the
// assignment names others), until the others report in their member Leases
// that they hold them (their caches synced), and until they reconciled its
// share again: the first of its objects and all of them. Its share is the
// objects it reconciled last. It returns the replicas left.
func (s *suite) shardCrash(ctx context.Context, v, lease string, ps []*proc, who string) ([]*proc, error) {
	st, err := s.waitSettled(ctx, lease, ps, 2*time.Minute)
	if err != nil {
		return ps, err
	}
	i := slices.IndexFunc(ps, func(p *proc) bool { return p.identity == st.leader })
	if i < 0 {
		return ps, fmt.Errorf("the leader %q is none of the replicas", st.leader)
	}
	if who == crashMember {
		i = (i + 1) % len(ps)
	}
	victim := ps[i]
	name := st.members[victim.identity].name
	buckets := st.members[victim.identity].buckets
	victim.kill()
	killed := time.Now()
	share := lastReconciledBy(ps, victim, killed)
	ps = slices.Delete(ps, i, i+1)
	timeout := s.cfg.failover.duration + time.Minute + time.Duration(len(share))*time.Millisecond
	moved := make(chan [2]time.Time, 1)
	movedCtx, stopMoved := context.WithCancel(ctx)
	defer stopMoved()
	go func() { moved <- s.waitMoved(movedCtx, lease, name, buckets, timeout) }()
	// A crash moves buckets, no object is written: the others list the
	// victim's buckets once its Lease expired.
	first, err := waitTaken(ps, share, killed, timeout)
	if err != nil {
		return ps, fmt.Errorf("after the crash of the %s: %w", who, err)
	}
	at := <-moved
	if at[0].IsZero() || at[1].IsZero() {
		return ps, fmt.Errorf("after the crash of the %s: its %d buckets were not reassigned and held by the others within %v", who, len(buckets), timeout)
	}
	since := func(t time.Time) float64 { return t.Sub(killed).Seconds() }
	for _, m := range []string{"shard.crash", "shard.crash." + who} {
		s.res.add(m+".reassigned.seconds", v, since(at[0]))
		s.res.add(m+".taken.seconds", v, since(at[1]))
		s.res.add(m+".first.seconds", v, since(earliestOf(first)))
		s.res.add(m+".seconds", v, since(latest(first)))
	}
	s.res.add("shard.crash.objects", v, float64(len(share)))
	logf("   %s: crash of the %s (%d objects, %d buckets): reassigned %.2fs, first object %.2fs, buckets held %.2fs, all objects %.2fs",
		v, who, len(share), len(buckets), since(at[0]), since(earliestOf(first)), since(at[1]), since(latest(first)))
	return ps, nil
}

// shardState is what the Leases of a sharded operator say: who leads, the
// assignment, and what each member reports it holds.
type shardState struct {
	leader   string
	assigned []string        // member of each bucket
	draining int             // buckets being handed over
	members  map[string]held // by identity
}

type held struct {
	name    string // member name
	buckets []int
}

// shardLeases reads the Leases of the operator with lease name lease.
func (s *suite) shardLeases(ctx context.Context, lease string) (shardState, error) {
	st := shardState{members: map[string]held{}}
	list, err := s.env.Clientset().CoordinationV1().Leases(leaseNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return st, err
	}
	for _, l := range list.Items {
		switch name, member := strings.CutPrefix(l.Name, lease+"-member-"); {
		case l.Name == lease:
			st.leader = holder(&l)
		case l.Name == lease+"-shards":
			var a struct {
				Buckets  []string       `json:"buckets"`
				Draining map[string]any `json:"draining"`
			}
			if err := json.Unmarshal([]byte(l.Annotations["shard.opgen.dev/assignment"]), &a); err != nil {
				return st, fmt.Errorf("the assignment in %s: %w", l.Name, err)
			}
			st.assigned, st.draining = a.Buckets, len(a.Draining)
		case member && holder(&l) != "":
			var h struct {
				Buckets []int `json:"buckets"`
			}
			if raw, ok := l.Annotations["shard.opgen.dev/held"]; ok {
				if err := json.Unmarshal([]byte(raw), &h); err != nil {
					return st, fmt.Errorf("the member Lease %s: %w", l.Name, err)
				}
			}
			st.members[holder(&l)] = held{name: name, buckets: h.Buckets}
		}
	}
	return st, nil
}

// waitSettled waits until no bucket is being handed over and every replica
// of ps holds exactly the buckets the assignment gives it.
func (s *suite) waitSettled(ctx context.Context, lease string, ps []*proc, timeout time.Duration) (shardState, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if exit := exitedOf(ps, "waiting for the assignment of buckets to settle"); exit != nil {
			return shardState{}, exit
		}
		st, err := s.shardLeases(ctx, lease)
		if err == nil && st.settled(ps) {
			return st, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return shardState{}, fmt.Errorf("the assignment of buckets did not settle within %v", timeout)
}

func (st shardState) settled(ps []*proc) bool {
	if st.draining > 0 || len(st.assigned) == 0 {
		return false
	}
	n := 0
	for _, p := range ps {
		m, ok := st.members[p.identity]
		if !ok {
			return false
		}
		for _, b := range m.buckets {
			if b >= len(st.assigned) || st.assigned[b] != m.name {
				return false
			}
		}
		n += len(m.buckets)
	}
	return n == len(st.assigned)
}
