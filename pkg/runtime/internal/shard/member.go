package shard

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Member is this replica's side of sharding: the buckets it holds, the
// caches of their objects, and the gate every action passes.
type Member struct {
	env Env

	mu       sync.Mutex
	drained  *sync.Cond // signalled when an action of a bucket ends
	held     [Buckets]bool
	inflight [Buckets]int
	sets     []*Informers
	applied  int64 // the assignment's generation reported
}

// NewMember returns this replica's member.
func NewMember(env Env) *Member {
	m := &Member{env: env}
	m.drained = sync.NewCond(&m.mu)
	return m
}

// Register adds the cache of a sharded kind: it follows the held buckets.
func (m *Member) Register(s *Informers) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sets = append(m.sets, s)
}

// Enter starts an action on an object of bucket b. It is false when this
// member does not hold b. Exit must follow a true.
func (m *Member) Enter(b int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held[b] {
		return false
	}
	m.inflight[b]++
	return true
}

// Exit ends an action Enter started.
func (m *Member) Exit(b int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight[b]--
	if m.inflight[b] == 0 {
		m.drained.Broadcast()
	}
}

// Holds reports whether this member holds bucket b.
func (m *Member) Holds(b int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[b]
}

// take starts caching and handling bucket b.
func (m *Member) take(b int) error {
	m.mu.Lock()
	sets := slices.Clone(m.sets)
	m.mu.Unlock()
	for _, s := range sets {
		if _, err := s.add(b); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.held[b] = true
	m.mu.Unlock()
	m.counted()
	return nil
}

func (m *Member) counted() {
	if m.env.Hooks.Buckets != nil {
		m.env.Hooks.Buckets(len(m.heldBuckets()))
	}
}

// release lets go of bucket b. No action starts on its objects from now;
// it waits for those in flight, then drops the caches.
func (m *Member) release(b int) {
	m.mu.Lock()
	m.held[b] = false
	for m.inflight[b] > 0 {
		m.drained.Wait()
	}
	sets := slices.Clone(m.sets)
	m.mu.Unlock()
	m.counted()
	for _, s := range sets {
		s.drop(b)
	}
}

// heldBuckets returns the buckets held, in order.
func (m *Member) heldBuckets() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for b, h := range m.held {
		if h {
			out = append(out, b)
		}
	}
	return out
}

// Follow applies the sharder's assignment while ctx lasts, that is while
// this replica holds its member Lease. Then it lets go of every bucket.
func (m *Member) Follow(ctx context.Context) {
	k := m.env.Keys
	inf := m.env.leaseInformer(k.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", k.ShardsLease).String()
	})
	kick := make(chan struct{}, 1)
	wake := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { wake() },
		UpdateFunc: func(any, any) { wake() },
	})
	var running sync.WaitGroup
	running.Go(func() { inf.RunWithContext(ctx) })
	defer func() {
		running.Wait()
		m.releaseAll()
	}()
	tick := m.env.Clock.NewTicker(m.env.RetryPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-tick.C():
		}
		obj, ok, _ := inf.GetStore().GetByKey(k.Namespace + "/" + k.ShardsLease)
		if !ok {
			continue
		}
		if err := m.apply(ctx, obj.(*coordinationv1.Lease)); err != nil && ctx.Err() == nil {
			m.env.Log.Error(err, "could not apply the sharder's assignment; retrying")
		}
	}
}

func (m *Member) releaseAll() {
	for _, b := range m.heldBuckets() {
		m.release(b)
		m.env.Hooks.moved(Move{Bucket: b, Verb: Release, From: m.env.Keys.Member}, 0)
	}
}

// apply takes and releases buckets as the assignment in l says. Then it
// reports what this member holds in its own Lease.
func (m *Member) apply(ctx context.Context, l *coordinationv1.Lease) error {
	a, err := ReadAssignment(l)
	if err != nil {
		return err
	}
	if a.Generation <= m.applied {
		return nil
	}
	mine := map[int]bool{}
	for b, member := range a.Buckets {
		if member == m.env.Keys.Member {
			mine[b] = true
		}
	}
	for _, b := range m.heldBuckets() {
		if !mine[b] {
			m.release(b)
			m.env.Hooks.moved(Move{Bucket: b, Verb: Release, From: m.env.Keys.Member}, 0)
		}
	}
	var take []int
	for b := range mine {
		if !m.Holds(b) {
			take = append(take, b)
		}
	}
	slices.Sort(take)
	if err := m.takeAll(ctx, take); err != nil {
		return err
	}
	if err := m.report(ctx, Held{Generation: a.Generation, Buckets: m.heldBuckets()}); err != nil {
		return err
	}
	m.applied = a.Generation
	return nil
}

// takeConcurrency bounds the buckets whose caches list at once. A member
// that takes every bucket at its start lists them a few at a time.
const takeConcurrency = 4

// takeAll takes the buckets, takeConcurrency at a time, but the first
// alone: its objects are handled as soon as its caches synced, instead of
// when the first of several lists sharing the API server ends (after a
// crash, every member lists at once). Each counts until its caches synced.
func (m *Member) takeAll(ctx context.Context, buckets []int) error {
	slots := make(chan struct{}, takeConcurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, b := range buckets {
		if i == 1 {
			wg.Wait()
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := m.take(b); err != nil {
			<-slots
			return err
		}
		m.env.Hooks.moved(Move{Bucket: b, Verb: Take, To: m.env.Keys.Member}, 0)
		wg.Go(func() {
			defer func() { <-slots }()
			_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
				return m.synced(b), nil
			})
		})
	}
	return nil
}

// synced reports whether the caches of bucket b synced.
func (m *Member) synced(b int) bool {
	m.mu.Lock()
	sets := slices.Clone(m.sets)
	m.mu.Unlock()
	for _, s := range sets {
		if !s.synced(b) {
			return false
		}
	}
	return true
}

// report writes h into this member's Lease. The elector renews the same
// Lease: a conflict with it is retried.
func (m *Member) report(ctx context.Context, h Held) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	k := m.env.Keys
	leases := m.env.Leases.Leases(k.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(ctx, k.LeasePrefix+k.Member, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[HeldAnnotation] = string(data)
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
}
