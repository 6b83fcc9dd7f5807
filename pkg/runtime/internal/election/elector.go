package election

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
)

// Config configures an Elector. Every duration must be set.
type Config struct {
	// Namespace and LeaseName name the Lease.
	Namespace, LeaseName string
	// Identity is this replica's holder identity.
	Identity string
	// LeaseDuration is how long a lease holds without renewal.
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder tries to renew before it gives
	// up. It is below LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod is the pause between tries to acquire or renew.
	RetryPeriod time.Duration
	// Acquired is the log line of a won lease, such as "became leader".
	Acquired string
	// Lost is the cause of the holder's context when a renewal failed in
	// time, and what Run returns then.
	Lost error
	// Renewed, when set, learns of every acquisition and renewal that
	// succeeded, with the time the try started: the lease holds from then
	// (internal/fence).
	Renewed func(start time.Time)
	// Stopped, when set, learns that this replica stopped leading: the
	// lease was released or lost.
	Stopped func()
}

// Elector campaigns for a Lease with client-go's LeaseLock. It follows the
// rules of client-go's LeaderElector: a record held by another replica
// holds until LeaseDuration after this replica last saw it change. It adds
// two things for fast handover:
//
//   - A standby watches the Lease, when RBAC allows watch. It tries at once
//     when the holder releases it, and exactly when a held lease expires.
//   - The holder renews until its work drained, then releases the lease.
//     A graceful shutdown hands over in milliseconds, and two replicas
//     never work at once.
type Elector struct {
	lock   *resourcelock.LeaseLock
	leases coordinationclient.LeasesGetter
	opts   Config
	clock  clock.WithTicker
	log    logr.Logger

	mu           sync.Mutex
	observed     resourcelock.LeaderElectionRecord
	observedKey  string
	observedTime time.Time
	wake         chan struct{}
}

// New returns the elector of the Lease opts names.
func New(leases coordinationclient.LeasesGetter, opts Config, c clock.WithTicker, log logr.Logger) *Elector {
	if opts.Acquired == "" {
		opts.Acquired = "became leader"
	}
	return &Elector{
		lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: opts.Namespace, Name: opts.LeaseName},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: opts.Identity},
		},
		leases: leases,
		opts:   opts,
		clock:  c,
		log:    log.WithValues("lease", opts.Namespace+"/"+opts.LeaseName, "identity", opts.Identity),
		wake:   make(chan struct{}, 1),
	}
}

// Run campaigns until ctx ends or the lease is won. Then it calls lead
// with a context that ends with ctx, or with cause Config.Lost when a
// renewal failed in time. It renews until lead returns, then releases the
// lease. It returns nil when ctx ended, Config.Lost when the lease was
// lost.
//
// lead must return soon after its context ended. It reports whether all
// its work returned. When not, the lease is not released, since the work
// left behind may still write: it expires LeaseDuration after the last
// renewal.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context) (drained bool)) error {
	if !e.acquire(ctx) {
		e.releaseIfHeld()
		return nil
	}
	if e.opts.Stopped != nil {
		defer e.opts.Stopped()
	}
	e.log.Info(e.opts.Acquired)
	leadCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	drained := false
	go func() {
		defer close(done)
		drained = lead(leadCtx)
	}()
	if e.renew(done) {
		if drained {
			e.release()
		} else {
			e.log.Info("stopped renewing the lease without releasing it: work is left behind", "expiresIn", e.opts.LeaseDuration)
		}
		return nil
	}
	cancel(e.opts.Lost)
	<-done
	return e.opts.Lost
}

// acquire tries until it holds the lease or ctx ends.
func (e *Elector) acquire(ctx context.Context) bool {
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go e.watch(watchCtx)
	for {
		// A stop and a wake can come together: the stop wins, so that
		// no try starts after it (a client that ignored ctx would win).
		if ctx.Err() != nil {
			return false
		}
		if e.tryAcquireOrRenew(ctx) {
			return true
		}
		if !e.waitToRetry(ctx) {
			return false
		}
	}
}

// waitToRetry waits for the next try: RetryPeriod (with jitter), the
// moment the observed lease expires, or a release seen by the watch.
func (e *Elector) waitToRetry(ctx context.Context) bool {
	for {
		d := wait.Jitter(e.opts.RetryPeriod, 0.2)
		if left := e.expiresIn(); left < d {
			d = max(left, time.Millisecond)
		}
		t := e.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
			return true
		case <-e.wake:
			t.Stop()
			if e.available() {
				return true
			}
		}
	}
}

// renew renews every RetryPeriod until done closes (true) or no renewal
// succeeded for RenewDeadline (false).
func (e *Elector) renew(done <-chan struct{}) bool {
	last := e.clock.Now()
	tick := e.clock.NewTicker(e.opts.RetryPeriod)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return true
		case <-tick.C():
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.RenewDeadline)
		ok := e.tryAcquireOrRenew(ctx)
		cancel()
		if ok {
			last = e.clock.Now()
		} else if e.clock.Since(last) > e.opts.RenewDeadline {
			e.log.Error(e.opts.Lost, "failed to renew the lease in time")
			return false
		}
	}
}

// tryAcquireOrRenew follows client-go's LeaderElector.tryAcquireOrRenew;
// a success is reported to Config.Renewed with the time it started.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	start := e.clock.Now()
	ok := e.tryAcquireOrRenewAt(ctx, start)
	if ok && e.opts.Renewed != nil {
		e.opts.Renewed(start)
	}
	return ok
}

func (e *Elector) tryAcquireOrRenewAt(ctx context.Context, start time.Time) bool {
	now := metav1.NewTime(start)
	record := resourcelock.LeaderElectionRecord{
		HolderIdentity:       e.opts.Identity,
		LeaseDurationSeconds: int(e.opts.LeaseDuration / time.Second),
		RenewTime:            now,
		AcquireTime:          now,
	}
	old, _, err := e.lock.Get(ctx)
	if apierrors.IsNotFound(err) {
		if err := e.lock.Create(ctx, record); err != nil {
			e.log.V(1).Info("could not create the lease", "error", err.Error())
			return false
		}
		e.observe(record, "")
		return true
	}
	if err != nil {
		e.log.V(1).Info("could not read the lease", "error", err.Error())
		return false
	}
	e.observe(*old, "")
	if old.HolderIdentity != "" && old.HolderIdentity != e.opts.Identity && e.expiresIn() > 0 {
		return false
	}
	if old.HolderIdentity == e.opts.Identity {
		record.AcquireTime = old.AcquireTime
		record.LeaderTransitions = old.LeaderTransitions
	} else {
		record.LeaderTransitions = old.LeaderTransitions + 1
	}
	if err := e.lock.Update(ctx, record); err != nil {
		e.log.V(1).Info("could not update the lease", "error", err.Error())
		return false
	}
	e.observe(record, "")
	return true
}

// Saw tells the elector that the Lease held record when this replica
// last saw it change, at: the holder's lease counts from then, as if the
// elector had been watching. A replica that followed the Lease before it
// campaigns takes an expired lease at once, not a lease duration later.
func (e *Elector) Saw(r resourcelock.LeaderElectionRecord, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observed, e.observedKey, e.observedTime = r, recordKey(r), at
}

// observe records the lease as last seen; the expiry clock restarts when
// the record changed. key tells records apart ("" for recordKey).
func (e *Elector) observe(r resourcelock.LeaderElectionRecord, key string) {
	if key == "" {
		key = recordKey(r)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if key != e.observedKey {
		e.observed, e.observedKey, e.observedTime = r, key, e.clock.Now()
	}
}

// recordKey spells every field of r, its times to the nanosecond. Not the
// record's JSON, as client-go compares: that holds the times to the
// second, so two renewals within one second (a RetryPeriod under 1s) look
// the same, and a standby would take a lease renewed under its eyes.
func recordKey(r resourcelock.LeaderElectionRecord) string {
	return fmt.Sprintf("%q %d %s %s %d %q %q", r.HolderIdentity, r.LeaseDurationSeconds,
		r.AcquireTime.UTC().Format(time.RFC3339Nano), r.RenewTime.UTC().Format(time.RFC3339Nano),
		r.LeaderTransitions, r.Strategy, r.PreferredHolder)
}

// expiresIn is how long the observed lease still holds.
func (e *Elector) expiresIn() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := time.Duration(e.observed.LeaseDurationSeconds) * time.Second
	if d == 0 {
		d = e.opts.LeaseDuration
	}
	return e.observedTime.Add(d).Sub(e.clock.Now())
}

func (e *Elector) available() bool {
	e.mu.Lock()
	holder := e.observed.HolderIdentity
	e.mu.Unlock()
	return holder == "" || holder == e.opts.Identity || e.expiresIn() <= 0
}

// releaseIfHeld releases the lease when the server says this replica
// holds it although acquire gave up: ctx ended while an acquiring write
// was under way, and the write landed with its answer unread. Without
// it, such a lease stays held until it expires, with nobody working.
func (e *Elector) releaseIfHeld() {
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.RenewDeadline)
	defer cancel()
	cur, _, err := e.lock.Get(ctx)
	if err != nil || cur.HolderIdentity != e.opts.Identity {
		return
	}
	e.observe(*cur, "")
	e.release()
}

// release gives the lease up, as client-go's ReleaseOnCancel does, so a
// standby can take it at once.
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.RenewDeadline)
	defer cancel()
	e.mu.Lock()
	old := e.observed
	e.mu.Unlock()
	now := metav1.NewTime(e.clock.Now())
	record := resourcelock.LeaderElectionRecord{
		LeaderTransitions:    old.LeaderTransitions,
		LeaseDurationSeconds: 1,
		RenewTime:            now,
		AcquireTime:          now,
	}
	err := e.lock.Update(ctx, record)
	if apierrors.IsConflict(err) {
		// Another write to the Lease (a sharded member's report of its
		// buckets): read it again, and release it if it is still ours.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, _, err := e.lock.Get(ctx)
			if err != nil || cur.HolderIdentity != e.opts.Identity {
				return err
			}
			return e.lock.Update(ctx, record)
		})
	}
	if err != nil {
		e.log.Error(err, "could not release the lease; a standby takes over when it expires")
		return
	}
	e.log.Info("released the lease")
}

// watch follows the Lease while standing by, so that a release or a
// renewal is seen at once. It needs the watch verb on leases; without it
// (Forbidden) the elector polls every RetryPeriod.
func (e *Elector) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := e.leases.Leases(e.opts.Namespace).Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", e.opts.LeaseName).String(),
		})
		if apierrors.IsForbidden(err) {
			e.log.V(1).Info("cannot watch the lease; standing by with polling only (grant watch on leases for faster handover)")
			return
		}
		if err != nil {
			if !sleepCtx(ctx, e.clock, e.opts.RetryPeriod) {
				return
			}
			continue
		}
		e.follow(ctx, w)
	}
}

func (e *Elector) follow(ctx context.Context, w watch.Interface) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			switch lease, _ := ev.Object.(*coordinationv1.Lease); {
			case ev.Type == watch.Deleted:
				e.observe(resourcelock.LeaderElectionRecord{}, "deleted")
			case lease != nil:
				e.observe(*resourcelock.LeaseSpecToLeaderElectionRecord(&lease.Spec), "")
			default:
				continue
			}
			select {
			case e.wake <- struct{}{}:
			default:
			}
		}
	}
}

func sleepCtx(ctx context.Context, c clock.Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
