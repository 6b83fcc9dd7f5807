package shard

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// sharderWorkers label new objects concurrently.
const sharderWorkers = 4

// Sharder labels new objects with their bucket and assigns the buckets to
// the live members. Its caches run on every replica from the start
// (Watch), so that a replica that becomes leader acts at once. It labels
// and assigns only while it leads (Run).
type Sharder struct {
	env Env

	leases  cache.SharedIndexInformer
	members *memberLeases
	kinds   []Kind
	synced  []cache.DoneChecker
	queue   workqueue.TypedRateLimitingInterface[item]
	kick    chan struct{}
	leading atomic.Bool // the queue fills only while Run runs

	forbidden sync.Once // the delete of a stale Lease was refused
	cold      coldStart
	record    *coordinationv1.Lease // the assignment's Lease as last read or written
	assign    Assignment
	drains    map[int]time.Time // when each bucket was drained
	live      int
}

// Kind is a controller's kind as the sharder watches it: the objects
// without a valid bucket label, which it labels at once, so that its cache
// holds only the new ones.
type Kind struct {
	// Controller names the controller in logs.
	Controller string
	// Resource writes the bucket label of an object of the kind.
	Resource metadata.Getter
	// Informers cache the kind's objects that match Keys.Unlabelled, one
	// per watched namespace, not started.
	Informers []cache.SharedIndexInformer
}

// item is one object of one sharded kind.
type item struct {
	kind      int
	namespace string
	name      string
}

// NewSharder returns the sharder of kinds.
func NewSharder(env Env, kinds []Kind) *Sharder {
	return &Sharder{
		env:     env,
		kinds:   kinds,
		members: newMemberLeases(env.Keys.LeasePrefix, env.LeaseDuration, env.Clock),
		cold:    coldStart{quiet: env.RetryPeriod, limit: env.LeaseDuration},
		drains:  map[int]time.Time{},
		kick:    make(chan struct{}, 1),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[item](),
			workqueue.TypedRateLimitingQueueConfig[item]{Name: "sharder"}),
	}
}

// Watch starts the sharder's caches until ctx ends: the member Leases and
// the kinds' unlabelled objects. Every replica runs them, leader or not.
func (s *Sharder) Watch(ctx context.Context) error {
	s.leases = s.env.leaseInformer(s.env.Keys.Namespace, func(*metav1.ListOptions) {})
	if _, err := s.leases.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			s.onLease(obj, func(l *coordinationv1.Lease) { s.members.observe(l, initial) })
		},
		UpdateFunc: func(_, obj any) { s.onLease(obj, func(l *coordinationv1.Lease) { s.members.observe(l, false) }) },
		DeleteFunc: func(obj any) { s.onLease(obj, s.members.forget) },
	}); err != nil {
		return err
	}
	s.synced = []cache.DoneChecker{s.leases.HasSyncedChecker()}
	for kind, k := range s.kinds {
		for _, inf := range k.Informers {
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { s.enqueue(kind, obj) },
				UpdateFunc: func(_, obj any) { s.enqueue(kind, obj) },
			}); err != nil {
				return err
			}
			s.synced = append(s.synced, inf.HasSyncedChecker())
		}
	}
	go s.leases.RunWithContext(ctx)
	for _, k := range s.kinds {
		for _, inf := range k.Informers {
			go inf.RunWithContext(ctx)
		}
	}
	return nil
}

// onLease applies f to the Lease of an event, a tombstone's last state
// included, and wakes the sharder.
func (s *Sharder) onLease(obj any, f func(*coordinationv1.Lease)) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if l, ok := obj.(*coordinationv1.Lease); ok {
		f(l)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run labels and assigns until ctx ends. It is a leader-only Runnable,
// started after Watch.
//
// It looks again at every change of a Lease, at the moment the first live
// member's Lease would expire (a Lease expires without an event), and
// every RetryPeriod, which retries a failed write.
func (s *Sharder) Run(ctx context.Context) error {
	defer s.queue.ShutDown()
	if !cache.WaitFor(ctx, "", s.synced...) {
		return nil
	}
	if err := s.load(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	s.queueCached()
	var wg sync.WaitGroup
	for range sharderWorkers {
		wg.Go(func() {
			for s.processNext(ctx) {
			}
		})
	}
	s.assignUntil(ctx)
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

// queueCached starts queueing: from now the event handlers queue what
// comes, and what came before is in the caches.
func (s *Sharder) queueCached() {
	s.leading.Store(true)
	for kind, k := range s.kinds {
		for _, inf := range k.Informers {
			for _, obj := range inf.GetStore().List() {
				s.enqueue(kind, obj)
			}
		}
	}
}

// assignUntil rebalances at every look until ctx ends.
func (s *Sharder) assignUntil(ctx context.Context) {
	retry := s.env.RetryPeriod
	for ctx.Err() == nil {
		next, err := s.rebalance(ctx)
		if err != nil && ctx.Err() == nil {
			s.env.Log.Error(err, "could not write the assignment of buckets; retrying", "in", retry)
		}
		if next <= 0 || next > retry || err != nil {
			next = retry
		}
		t := s.env.Clock.NewTimer(next + time.Millisecond)
		select {
		case <-ctx.Done():
		case <-s.kick:
		case <-t.C():
		}
		t.Stop()
	}
}

// load reads the assignment a former leader left, or creates its Lease,
// and becomes the Lease's holder.
func (s *Sharder) load(ctx context.Context) error {
	k := s.env.Keys
	leases := s.env.Leases.Leases(k.Namespace)
	return wait.PollUntilContextCancel(ctx, s.env.RetryPeriod, true, func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, k.ShardsLease, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			holder := s.env.Identity
			l, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: k.ShardsLease, Namespace: k.Namespace},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
			}, metav1.CreateOptions{})
		}
		if err != nil {
			s.env.Log.Error(err, "could not read the assignment of buckets; retrying", "lease", k.Namespace+"/"+k.ShardsLease)
			return false, nil
		}
		a, err := ReadAssignment(l)
		if err != nil {
			return false, err
		}
		if h := l.Spec.HolderIdentity; h == nil || *h != s.env.Identity {
			// A new leader: the assignment is its to write from now on,
			// and its Lease says so.
			took := l.DeepCopy()
			took.Spec.HolderIdentity = &s.env.Identity
			now := metav1.NewMicroTime(s.env.Clock.Now())
			took.Spec.RenewTime = &now
			if l, err = leases.Update(ctx, took, metav1.UpdateOptions{}); err != nil {
				s.env.Log.Error(err, "could not take over the assignment of buckets; retrying", "lease", k.Namespace+"/"+k.ShardsLease)
				return false, nil
			}
		}
		s.record, s.assign = l, a
		s.env.Log.Info("sharding", "controllers", len(s.kinds), "generation", a.Generation)
		return true, nil
	})
}

// rebalance moves the buckets the ring of live members wants elsewhere,
// as far as Plan allows now. It returns how long until the first live
// member's Lease expires.
func (s *Sharder) rebalance(ctx context.Context) (time.Duration, error) {
	now := s.env.Clock.Now()
	live, held, next := s.members.live()
	if len(live) != s.live {
		s.live = len(live)
		if s.env.Hooks.Members != nil {
			s.env.Hooks.Members(len(live))
		}
		s.env.Log.Info("members changed", "members", live)
	}
	s.collect(ctx)
	if wait := s.cold.wait(now, live, held); wait > 0 {
		if next > 0 {
			wait = min(wait, next)
		}
		return wait, nil
	}
	isLive := func(m string) bool { _, ok := held[m]; return ok }
	want := Sticky(s.assign.Buckets, NewRing(live, 0).Owners(), live)
	plan, moves := Plan(s.assign, want, isLive, func(m string) Held { return held[m] })
	if len(moves) == 0 {
		return next, nil
	}
	if err := s.write(ctx, plan); err != nil {
		return next, err
	}
	for _, mv := range moves {
		s.env.Hooks.moved(mv, s.handover(now, mv))
	}
	return next, nil
}

// collect deletes the Leases of members gone for a LeaseDuration, whose
// buckets the assignment names no more: a replica of a Deployment has a
// new name after each restart, and its old Lease would stay for good.
// The delete is conditional on the version seen, so a Lease renewed
// meanwhile stays.
func (s *Sharder) collect(ctx context.Context) {
	for member, rv := range s.members.stale(s.env.LeaseDuration) {
		if s.assigned(member) {
			continue
		}
		name := s.env.Keys.LeasePrefix + member
		err := s.env.Leases.Leases(s.env.Keys.Namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		switch {
		case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		case apierrors.IsForbidden(err):
			s.forbidden.Do(func() {
				s.env.Log.Error(err, "cannot delete the Lease of a member gone for good: grant delete on leases to the operator (the generated leader-election Role does)", "lease", name)
			})
		default:
			s.env.Log.Error(err, "could not delete the Lease of a member gone for good; retrying", "lease", name)
		}
	}
}

// assigned reports whether the assignment names member for a bucket, or
// drains one from it.
func (s *Sharder) assigned(member string) bool {
	if slices.Contains(s.assign.Buckets, member) {
		return true
	}
	for _, d := range s.assign.Draining {
		if d.From == member {
			return true
		}
	}
	return false
}

// handover records a drain's time, and returns the time since its drain
// for the assignment that ends it.
func (s *Sharder) handover(now time.Time, mv Move) time.Duration {
	switch mv.Verb {
	case Drain:
		s.drains[mv.Bucket] = now
	case Assign, Reassign:
		if t, ok := s.drains[mv.Bucket]; ok {
			delete(s.drains, mv.Bucket)
			return s.env.Clock.Since(t)
		}
	}
	return 0
}

// write records a in the assignment's Lease. On a conflict it reads the
// Lease again, and the next round plans from what it holds.
func (s *Sharder) write(ctx context.Context, a Assignment) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	l := s.record.DeepCopy()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AssignmentAnnotation] = string(data)
	now := metav1.NewMicroTime(s.env.Clock.Now())
	l.Spec.RenewTime = &now
	got, err := s.env.Leases.Leases(s.env.Keys.Namespace).Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return s.load(ctx)
	}
	if err != nil {
		return err
	}
	s.record, s.assign = got, a
	return nil
}
