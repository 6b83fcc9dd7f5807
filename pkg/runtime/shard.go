package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Sharding (Options.Sharding) spreads the objects of every controller over
// the replicas with what Kubernetes already has: Leases for membership and
// for the assignment, a label per object, and label-selected watches for
// delivery.
//
//   - Each object belongs to one of shard.Buckets buckets, a hash of its
//     key. The sharder writes it once, as the label
//     shard.opgen.dev/<operator>=<bucket>; descendants carry their
//     owner's.
//   - Each replica (a member) holds a Lease of its own,
//     <lease>-member-<member>, renewed like the leader's.
//   - The leader runs the sharder: it labels new objects, and assigns the
//     buckets to the live members by consistent hashing with bounded loads
//     (shard.Ring.Owners), recorded in the annotation
//     shard.opgen.dev/assignment of the Lease <lease>-shards.
//   - A member caches and handles the buckets assigned to it: one
//     label-selected informer per bucket for the controlled kind, and one
//     for each owned kind. It reports what it holds, and the assignment it
//     applied, in the annotation shard.opgen.dev/held of its own Lease.
//   - A move between live members is a handover: the sharder unassigns
//     the bucket (drain); the member stops starting actions on its
//     objects, waits for those in flight, stops caching them, and reports
//     it; only then does the sharder assign the bucket to its new member.
//     No two members handle an object at once.
//   - A member whose Lease expired lost its buckets at once: it stops
//     working when it cannot renew within RenewDeadline, before the Lease
//     expires, so nobody else handles them. No object is written: the new
//     members list the buckets from the API server's watch cache.
//   - A member that shuts down releases its Lease after its workers
//     drained: its buckets move without waiting for the expiry.

// shardKeys are the names of a sharded operator.
type shardKeys struct {
	label       string // the bucket label's key
	member      string // this replica's member name
	leasePrefix string // member Leases are leasePrefix + member
	shardsLease string // the assignment's Lease
	namespace   string // of the Leases
}

// shardLabelDomain prefixes the bucket label and the Leases' annotations.
const shardLabelDomain = "shard.opgen.dev/"

// The annotations of the assignment's Lease (shard.Assignment) and of a
// member's Lease (shard.Held), as JSON.
const (
	assignmentAnnotation = shardLabelDomain + "assignment"
	heldAnnotation       = shardLabelDomain + "held"
)

func newShardKeys(opts Options) *shardKeys {
	return &shardKeys{
		label:       shardLabelDomain + labelSafe(opts.Name, 63),
		member:      memberName(opts.LeaderElection.Identity),
		leasePrefix: opts.LeaderElection.LeaseName + "-member-",
		shardsLease: opts.LeaderElection.LeaseName + "-shards",
		namespace:   opts.LeaderElection.Namespace,
	}
}

var labelUnsafe = regexp.MustCompile(`[^a-z0-9.-]+`)

// memberName turns a replica's identity into a part of a Lease name and a
// label value: lower case, only letters, digits, '-' and '.', at most 63
// characters, with a hash of the identity so that two identities never
// meet in one name.
func memberName(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return labelSafe(identity, 63-7) + "-" + hex.EncodeToString(sum[:3])
}

// labelSafe shortens and cleans s into a label value of at most n
// characters that starts and ends with a letter or digit.
func labelSafe(s string, n int) string {
	s = labelUnsafe.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > n {
		s = s[:n]
	}
	s = strings.Trim(s, "-.")
	if s == "" || len(validation.IsValidLabelValue(s)) > 0 {
		return "x"
	}
	return s
}

// selector is the label selector of bucket b.
func (k *shardKeys) selector(b int) string { return k.label + "=" + shard.Label(b) }

// bucketOf returns the bucket m's label names.
func (k *shardKeys) bucketOf(m metav1.Object) (int, bool) {
	return shard.ParseLabel(m.GetLabels()[k.label])
}

// keyBucket is the bucket of the object namespace/name: the sharder's
// choice for it.
func keyBucket(namespace, name string) int { return shard.Bucket(namespace + "/" + name) }

// routeKey is the bucket of a cache key, for bucketInformers.route.
func routeKey(key string) int {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	return keyBucket(ns, name)
}

// ErrLostMembership is returned by Run when a sharded replica could not
// renew its member Lease in time and stopped working, so that the
// sharder can give its buckets to the others. Exit and let the Pod
// restart.
var ErrLostMembership = errors.New("runtime: lost the member lease of sharding; stopped working so that the objects can move to other replicas")

// runMember holds this replica's member Lease and calls work with a
// context that ends when ctx ends or the Lease could not be renewed (then
// with cause ErrLostMembership). The Lease is released once work returned
// drained.
func (o *Operator) runMember(ctx context.Context, work func(ctx context.Context) bool) error {
	le := o.opts.LeaderElection
	le.LeaseName = o.shard.leasePrefix + o.shard.member
	e := newElector(o.leases, le, o.opts.Clock, o.log.WithName("member"))
	e.acquired = "joined as a member of sharding"
	err := e.run(ctx, work)
	if errors.Is(err, ErrLostLeadership) {
		return ErrLostMembership
	}
	return err
}

// shardMember is this replica's side of sharding: the buckets it holds,
// the caches of their objects, and the gate every action passes.
type shardMember struct {
	op   *Operator
	keys *shardKeys
	log  logr.Logger

	mu       sync.Mutex
	drained  *sync.Cond // signalled when an action of a bucket ends
	held     [shard.Buckets]bool
	inflight [shard.Buckets]int
	sets     []*bucketInformers
	applied  int64 // the assignment's generation reported
}

func newShardMember(o *Operator) *shardMember {
	m := &shardMember{op: o, keys: o.shard, log: o.log.WithName("member")}
	m.drained = sync.NewCond(&m.mu)
	return m
}

// register adds a cache of a sharded kind: it follows the held buckets.
func (m *shardMember) register(s *bucketInformers) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sets = append(m.sets, s)
}

// enter starts an action on an object of bucket b: false when this member
// does not hold b. exit must follow a true.
func (m *shardMember) enter(b int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held[b] {
		return false
	}
	m.inflight[b]++
	return true
}

func (m *shardMember) exit(b int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight[b]--
	if m.inflight[b] == 0 {
		m.drained.Broadcast()
	}
}

// holds reports whether this member holds bucket b.
func (m *shardMember) holds(b int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[b]
}

// take starts caching and handling bucket b.
func (m *shardMember) take(b int) error {
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

// counted sets the metric of the buckets held.
func (m *shardMember) counted() {
	if m.op != nil {
		m.op.metrics.shardBuckets.Set(float64(len(m.heldBuckets())))
	}
}

// release lets go of bucket b: no action starts on its objects from now,
// the ones in flight end, and its caches are dropped.
func (m *shardMember) release(b int) {
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
func (m *shardMember) heldBuckets() []int {
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

// follow applies the sharder's assignment while ctx lasts (this replica
// holds its member Lease), then lets go of every bucket.
func (m *shardMember) follow(ctx context.Context) {
	f := informers.NewSharedInformerFactoryWithOptions(m.op.clientset, 0, informers.WithNamespace(m.keys.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", m.keys.shardsLease).String()
		}))
	inf := f.Coordination().V1().Leases().Informer()
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
	f.Start(ctx.Done())
	defer func() {
		f.Shutdown()
		for _, b := range m.heldBuckets() {
			m.release(b)
			m.moved(shard.Move{Bucket: b, Verb: "release", From: m.keys.member})
		}
	}()
	tick := m.op.opts.Clock.NewTicker(m.op.opts.LeaderElection.RetryPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-tick.C():
		}
		obj, ok, _ := inf.GetStore().GetByKey(m.keys.namespace + "/" + m.keys.shardsLease)
		if !ok {
			continue
		}
		if err := m.apply(ctx, obj.(*coordinationv1.Lease)); err != nil && ctx.Err() == nil {
			m.log.Error(err, "could not apply the sharder's assignment; retrying")
		}
	}
}

// apply takes and releases buckets as the assignment in l says, then
// reports what this member holds in its own Lease.
func (m *shardMember) apply(ctx context.Context, l *coordinationv1.Lease) error {
	a, err := readAssignment(l)
	if err != nil {
		return err
	}
	if a.Generation <= m.applied {
		return nil
	}
	mine := map[int]bool{}
	for b, member := range a.Buckets {
		if member == m.keys.member {
			mine[b] = true
		}
	}
	for _, b := range m.heldBuckets() {
		if !mine[b] {
			m.release(b)
			m.moved(shard.Move{Bucket: b, Verb: "release", From: m.keys.member})
		}
	}
	var take []int
	for b := range mine {
		if !m.holds(b) {
			take = append(take, b)
		}
	}
	slices.Sort(take)
	if err := m.takeAll(ctx, take); err != nil {
		return err
	}
	held := m.heldBuckets()
	if err := m.report(ctx, shard.Held{Generation: a.Generation, Buckets: held}); err != nil {
		return err
	}
	m.applied = a.Generation
	return nil
}

// takeConcurrency bounds the buckets whose caches list at once: a member
// taking every bucket at its start lists them a few at a time, not all
// of them together.
const takeConcurrency = 4

// takeAll takes the buckets, takeConcurrency at a time: each counts until
// its caches synced.
func (m *shardMember) takeAll(ctx context.Context, buckets []int) error {
	slots := make(chan struct{}, takeConcurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, b := range buckets {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := m.take(b); err != nil {
			<-slots
			return err
		}
		m.moved(shard.Move{Bucket: b, Verb: "take", To: m.keys.member})
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
func (m *shardMember) synced(b int) bool {
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
func (m *shardMember) report(ctx context.Context, h shard.Held) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	leases := m.op.leases.Leases(m.keys.namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(ctx, m.keys.leasePrefix+m.keys.member, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[heldAnnotation] = string(data)
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
}

func (m *shardMember) moved(mv shard.Move) {
	m.op.emit(telemetry.ShardMoved{Bucket: mv.Bucket, Verb: string(mv.Verb), From: mv.From, To: mv.To})
}

// readAssignment reads the assignment's annotation of l; a Lease without
// one has the empty assignment.
func readAssignment(l *coordinationv1.Lease) (shard.Assignment, error) {
	var a shard.Assignment
	raw, ok := l.Annotations[assignmentAnnotation]
	if !ok {
		return a, nil
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("runtime: the annotation %s of the Lease %s/%s is not an assignment of sharding (%w): delete the Lease, the leader writes it again", assignmentAnnotation, l.Namespace, l.Name, err)
	}
	return a, nil
}

// sharderWorkers label new objects concurrently.
const sharderWorkers = 4

// sharder labels new objects with their bucket and assigns the buckets to
// the live members. Its caches run on every replica from the start
// (watch), so that a replica that becomes leader acts at once; it labels
// and assigns only while it leads (Run).
type sharder struct {
	op   *Operator
	keys *shardKeys
	log  logr.Logger

	leases  cache.SharedIndexInformer
	members *memberLeases
	kinds   []*shardedKind
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[shardItem]
	kick    chan struct{}
	leading atomic.Bool // the queue fills only while Run runs

	cold   coldStart
	record *coordinationv1.Lease // the assignment's Lease as last read or written
	assign shard.Assignment
	drains map[int]time.Time // when each bucket was drained
	live   int
}

// shardedKind is a controller's kind as the sharder watches it: the
// objects without a valid bucket label, which it labels at once, so that
// its cache holds only the new ones.
type shardedKind struct {
	controller string
	gvr        schema.GroupVersionResource
	informers  []cache.SharedIndexInformer
}

// shardItem is one object of one sharded kind.
type shardItem struct {
	kind      int
	namespace string
	name      string
}

func (o *Operator) newSharder() *sharder {
	le := o.opts.LeaderElection
	return &sharder{
		op:      o,
		keys:    o.shard,
		log:     o.log.WithName("sharder"),
		members: newMemberLeases(o.shard.leasePrefix, le.LeaseDuration, o.opts.Clock),
		cold:    coldStart{quiet: le.RetryPeriod, limit: le.LeaseDuration},
		drains:  map[int]time.Time{},
		kick:    make(chan struct{}, 1),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[shardItem](),
			workqueue.TypedRateLimitingQueueConfig[shardItem]{Name: "sharder"}),
	}
}

// unlabelled selects the objects without a valid bucket label: notin
// also matches objects without the label.
func (k *shardKeys) unlabelled() string {
	values := make([]string, shard.Buckets)
	for b := range values {
		values[b] = shard.Label(b)
	}
	return k.label + " notin (" + strings.Join(values, ",") + ")"
}

// watch starts the sharder's caches until ctx ends: the member Leases and
// the objects of every sharded kind without a bucket label. Every replica
// runs them, leader or not.
func (s *sharder) watch(ctx context.Context) error {
	f := informers.NewSharedInformerFactoryWithOptions(s.op.clientset, 0, informers.WithNamespace(s.keys.namespace))
	s.leases = f.Coordination().V1().Leases().Informer()
	if _, err := s.leases.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			s.onLease(obj, func(l *coordinationv1.Lease) { s.members.observe(l, initial) })
		},
		UpdateFunc: func(_, obj any) { s.onLease(obj, func(l *coordinationv1.Lease) { s.members.observe(l, false) }) },
		DeleteFunc: func(obj any) { s.onLease(obj, s.members.forget) },
	}); err != nil {
		return err
	}
	s.synced = []cache.InformerSynced{s.leases.HasSynced}
	selector := s.keys.unlabelled()
	for _, c := range s.op.controllers {
		sk, ok := c.(shardable)
		if !ok {
			continue
		}
		gvr, namespaced := sk.shardedResource()
		k := &shardedKind{controller: c.controllerName(), gvr: gvr}
		for _, ns := range s.op.namespaces(namespaced) {
			inf, err := sk.unlabelled(ns, selector)
			if err != nil {
				return err
			}
			kind := len(s.kinds)
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { s.enqueue(kind, obj) },
				UpdateFunc: func(_, obj any) { s.enqueue(kind, obj) },
			}); err != nil {
				return err
			}
			k.informers = append(k.informers, inf)
			s.synced = append(s.synced, inf.HasSynced)
		}
		s.kinds = append(s.kinds, k)
	}
	f.Start(ctx.Done())
	for _, k := range s.kinds {
		for _, inf := range k.informers {
			go inf.RunWithContext(ctx)
		}
	}
	return nil
}

// onLease applies f to the Lease of an event (a tombstone's last state
// included) and wakes the sharder.
func (s *sharder) onLease(obj any, f func(*coordinationv1.Lease)) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if l, ok := obj.(*coordinationv1.Lease); ok {
		f(l)
	}
	s.wake()
}

func (s *sharder) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run labels and assigns until ctx ends; it is a leader-only Runnable,
// started after watch.
//
// It looks again at every change of a Lease, at the moment the first live
// member's Lease would expire (a Lease expires without an event), and
// every RetryPeriod, which retries a failed write.
func (s *sharder) Run(ctx context.Context) error {
	defer s.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return nil
	}
	if err := s.load(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// From now the event handlers queue what comes; what came before is
	// in the caches.
	s.leading.Store(true)
	for kind, k := range s.kinds {
		for _, inf := range k.informers {
			for _, obj := range inf.GetStore().List() {
				s.enqueue(kind, obj)
			}
		}
	}
	var wg sync.WaitGroup
	for range sharderWorkers {
		wg.Go(func() {
			for s.processNext(ctx) {
			}
		})
	}
	retry := s.op.opts.LeaderElection.RetryPeriod
	for ctx.Err() == nil {
		next, err := s.rebalance(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error(err, "could not write the assignment of buckets; retrying", "in", retry)
		}
		if next <= 0 || next > retry || err != nil {
			next = retry
		}
		t := s.op.opts.Clock.NewTimer(next + time.Millisecond)
		select {
		case <-ctx.Done():
		case <-s.kick:
		case <-t.C():
		}
		t.Stop()
	}
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

// load reads the assignment a former leader left, or creates its Lease.
func (s *sharder) load(ctx context.Context) error {
	leases := s.op.leases.Leases(s.keys.namespace)
	return wait.PollUntilContextCancel(ctx, s.op.opts.LeaderElection.RetryPeriod, true, func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, s.keys.shardsLease, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			holder := s.op.opts.LeaderElection.Identity
			l, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: s.keys.shardsLease, Namespace: s.keys.namespace},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
			}, metav1.CreateOptions{})
		}
		if err != nil {
			s.log.Error(err, "could not read the assignment of buckets; retrying", "lease", s.keys.namespace+"/"+s.keys.shardsLease)
			return false, nil
		}
		a, err := readAssignment(l)
		if err != nil {
			return false, err
		}
		s.record, s.assign = l, a
		s.log.Info("sharding", "controllers", len(s.kinds), "generation", a.Generation)
		return true, nil
	})
}

// shardable is a controller the sharder labels the objects of.
type shardable interface {
	shardedResource() (gvr schema.GroupVersionResource, namespaced bool)
	// unlabelled returns an informer of the controller's objects in ns
	// (as its kind selects them) that also match selector.
	unlabelled(ns, selector string) (cache.SharedIndexInformer, error)
}

// enqueue queues an object to label, while this replica leads: a
// standby's queue would only grow.
func (s *sharder) enqueue(kind int, obj any) {
	if !s.leading.Load() {
		return
	}
	if m, err := meta.Accessor(obj); err == nil {
		s.queue.Add(shardItem{kind: kind, namespace: m.GetNamespace(), name: m.GetName()})
	}
}

// rebalance moves the buckets the ring of live members wants elsewhere,
// as far as shard.Plan allows now. It returns how long until the first
// live member's Lease expires.
func (s *sharder) rebalance(ctx context.Context) (time.Duration, error) {
	now := s.op.opts.Clock.Now()
	live, held, next := s.members.live()
	if len(live) != s.live {
		s.live = len(live)
		s.op.metrics.shardMembers.Set(float64(len(live)))
		s.log.Info("members changed", "members", live)
	}
	if wait := s.cold.wait(now, live, held); wait > 0 {
		if next > 0 {
			wait = min(wait, next)
		}
		return wait, nil
	}
	isLive := func(m string) bool { _, ok := held[m]; return ok }
	plan, moves := shard.Plan(s.assign, shard.NewRing(live, 0).Owners(), isLive, func(m string) shard.Held { return held[m] })
	if len(moves) == 0 {
		return next, nil
	}
	if err := s.write(ctx, plan); err != nil {
		return next, err
	}
	for _, mv := range moves {
		e := telemetry.ShardMoved{Bucket: mv.Bucket, Verb: string(mv.Verb), From: mv.From, To: mv.To}
		switch mv.Verb {
		case shard.Drain:
			s.drains[mv.Bucket] = now
		case shard.Assign, shard.Reassign:
			if t, ok := s.drains[mv.Bucket]; ok {
				e.Handover = s.op.opts.Clock.Since(t)
				delete(s.drains, mv.Bucket)
			}
		}
		s.op.emit(e)
	}
	return next, nil
}

// write records a in the assignment's Lease. On a conflict it reads the
// Lease again, and the next round plans from what it holds.
func (s *sharder) write(ctx context.Context, a shard.Assignment) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	l := s.record.DeepCopy()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[assignmentAnnotation] = string(data)
	now := metav1.NewMicroTime(s.op.opts.Clock.Now())
	l.Spec.RenewTime = &now
	got, err := s.op.leases.Leases(s.keys.namespace).Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return s.load(ctx)
	}
	if err != nil {
		return err
	}
	s.record, s.assign = got, a
	return nil
}

func (s *sharder) processNext(ctx context.Context) bool {
	it, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(it)
	if err := s.label(ctx, it); err != nil {
		if ctx.Err() != nil {
			return false // stopping: the next leader labels it
		}
		if !apierrors.IsNotFound(err) {
			s.log.Error(err, "could not label an object with its bucket; retrying", "controller", s.kinds[it.kind].controller, "namespace", it.namespace, "name", it.name)
			s.queue.AddRateLimited(it)
			return true
		}
	}
	s.queue.Forget(it)
	return true
}

// label writes an object's bucket label, once in its life.
func (s *sharder) label(ctx context.Context, it shardItem) error {
	k := s.kinds[it.kind]
	found := false
	for _, inf := range k.informers {
		key := it.name
		if it.namespace != "" {
			key = it.namespace + "/" + it.name
		}
		if _, ok, _ := inf.GetStore().GetByKey(key); ok {
			found = true
			break
		}
	}
	if !found {
		return nil // labelled meanwhile, or gone
	}
	value := shard.Label(keyBucket(it.namespace, it.name))
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{s.keys.label: value}}})
	_, err := s.op.metadata.Resource(k.gvr).Namespace(it.namespace).Patch(ctx, it.name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// shardedResource names the controller's kind for the sharder.
func (c *Controller[T]) shardedResource() (schema.GroupVersionResource, bool) {
	return c.kind.GVR(), c.kind.Namespaced
}

// bucketLabel is the bucket label of a descendant: its controller
// owner's, as the cache holds the owner.
func (c *Controller[T]) bucketLabel(descendant metav1.Object) string {
	ns, name := descendant.GetNamespace(), ""
	if ref := metav1.GetControllerOfNoCopy(descendant); ref != nil {
		name = ref.Name
	}
	if !c.kind.Namespaced {
		ns = ""
	}
	if owner, ok := c.Get(cache.ObjectName{Namespace: ns, Name: name}); ok {
		if v, ok := owner.GetLabels()[c.op.shard.label]; ok {
			return v
		}
	}
	return shard.Label(keyBucket(ns, name))
}

func (c *Controller[T]) unlabelled(ns, selector string) (cache.SharedIndexInformer, error) {
	inf, err := c.kindInformer(ns, telemetry.Watch{Controller: "sharder", GVK: c.kind.GVK, Namespace: ns}, selector)
	if err != nil {
		return nil, err
	}
	return inf, inf.SetTransform(shardTransform)
}

// shardTransform keeps of an object what the sharder reads: its name and
// namespace.
func shardTransform(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil // a tombstone: kept as it is
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), ResourceVersion: m.GetResourceVersion()}}, nil
}

// shardObjects reports the objects of a controller's kind this member
// caches: its share. The metrics are served before the caches are set up,
// so it reads the informers watchesStarted published, not c.caches.
func (c *Controller[T]) shardObjects() float64 {
	infs := c.started.Load()
	if infs == nil {
		return 0
	}
	n := 0
	for _, inf := range *infs {
		n += len(inf.GetStore().ListKeys())
	}
	return float64(n)
}
