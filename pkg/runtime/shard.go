package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Sharding (Options.Sharding) spreads the objects of every controller over
// the replicas with what Kubernetes already has: a Lease per replica for
// membership, a label per object for its assignment, and label-selected
// watches for delivery.
//
//   - Each replica (a member) holds a Lease of its own, named
//     <lease>-member-<member>, renewed like the leader's.
//   - The leader runs the sharder: it watches the member Leases and the
//     controlled objects' metadata, and labels each object
//     shard.opgen.dev/<operator>=<member>, the member a consistent-hash
//     ring of the live members picks for its key.
//   - Each member's informers of the controlled kinds and of their owned
//     kinds select that label with its own member name, so it caches and
//     handles only its share; ApplyDescendants labels the descendants
//     with the member too.
//   - A move between live members is a handover: the sharder adds the
//     drain label (drain.shard.opgen.dev/<operator>=<member>); the owner
//     takes the key in its queue, which no worker holds then, and removes
//     both labels; the sharder then assigns the object to its new member.
//     No two members handle an object at once.
//   - A member whose Lease expired lost its objects at once: it stops
//     working when it cannot renew within RenewDeadline, before the Lease
//     expires, so nobody else handles them.
//   - A member that shuts down releases its Lease after its workers
//     drained: its objects move without waiting for the expiry.

// shardKeys are the labels and the member name of a sharded operator.
type shardKeys struct {
	label, drain string // label keys
	member       string // this replica's member name (label value)
	leasePrefix  string // member Leases are leasePrefix + member
}

// shardLabelDomain prefixes the shard label; the drain label adds "drain.".
const shardLabelDomain = "shard.opgen.dev/"

func newShardKeys(opts Options) *shardKeys {
	name := labelSafe(opts.Name, 63)
	return &shardKeys{
		label:       shardLabelDomain + name,
		drain:       "drain." + shardLabelDomain + name,
		member:      memberName(opts.LeaderElection.Identity),
		leasePrefix: opts.LeaderElection.LeaseName + "-member-",
	}
}

var labelUnsafe = regexp.MustCompile(`[^a-z0-9.-]+`)

// memberName turns a replica's identity into a label value and a part of a
// Lease name: lower case, only letters, digits, '-' and '.', at most 63
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

// selector is the label selector of this member's share.
func (k *shardKeys) selector() string { return k.label + "=" + k.member }

// mine reports whether m is assigned to this member.
func (k *shardKeys) mine(m metav1.Object) bool { return m.GetLabels()[k.label] == k.member }

// draining reports whether the sharder asked this member to let go of m.
func (k *shardKeys) draining(m metav1.Object) bool {
	return k.mine(m) && m.GetLabels()[k.drain] == k.member
}

// labelPatch is a merge patch of labels (a nil value removes one),
// conditional on the resource version the decision saw.
func labelPatch(rv string, labels map[string]*string) []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv, "labels": labels}})
	return data
}

// release removes this member's labels from obj, which the sharder asked
// it to let go of; the controller calls it from its worker for the key,
// so no handler runs on the object meanwhile.
func (k *shardKeys) release(ctx context.Context, op *Operator, gvr schema.GroupVersionResource, obj metav1.Object) error {
	patch := labelPatch(obj.GetResourceVersion(), map[string]*string{k.label: nil, k.drain: nil})
	_, err := op.metadata.Resource(gvr).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// runMember holds this replica's member Lease and calls work with a
// context that ends when ctx ends or the Lease could not be renewed (then
// with cause ErrLostMembership). The Lease is released once work returned
// drained.
func (o *Operator) runMember(ctx context.Context, work func(ctx context.Context) bool) error {
	le := o.opts.LeaderElection
	le.LeaseName = o.shard.leasePrefix + o.shard.member
	e := newElector(o.clientset.CoordinationV1(), le, o.opts.Clock, o.log.WithName("member"))
	e.acquired = "joined as a member of sharding"
	err := e.run(ctx, work)
	if errors.Is(err, ErrLostLeadership) {
		return ErrLostMembership
	}
	return err
}

// ErrLostMembership is returned by Run when a sharded replica could not
// renew its member Lease in time and stopped working, so that the
// sharder can give its objects to the others. Exit and let the Pod
// restart.
var ErrLostMembership = errors.New("runtime: lost the member lease of sharding; stopped working so that the objects can move to other replicas")

// sharderWorkers label objects concurrently: a start over unlabelled
// objects, or a member joining, writes one label per object moved.
const sharderWorkers = 4

// sharder assigns the objects of every controller to the live members.
// It runs on the leader.
type sharder struct {
	op   *Operator
	keys *shardKeys
	log  logr.Logger

	leases cache.SharedIndexInformer
	kinds  []*shardedKind
	queue  workqueue.TypedRateLimitingInterface[shardItem]

	mu      sync.Mutex
	members map[string]*memberSeen // by Lease name
	ring    *shard.Ring
	live    map[string]bool
	drains  map[shardItem]time.Time // when the drain label was set
}

// shardedKind is a controller's kind as the sharder watches it: metadata
// only, every object.
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

// memberSeen is a member Lease as the sharder last saw it change, by its
// own clock (as the elector judges a lease).
type memberSeen struct {
	holder   string
	renew    string
	duration time.Duration
	seen     time.Time
}

func (o *Operator) newSharder() *sharder {
	s := &sharder{
		op:      o,
		keys:    o.shard,
		log:     o.log.WithName("sharder"),
		members: map[string]*memberSeen{},
		ring:    shard.NewRing(nil, 0),
		live:    map[string]bool{},
		drains:  map[shardItem]time.Time{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[shardItem](),
			workqueue.TypedRateLimitingQueueConfig[shardItem]{Name: "sharder"}),
	}
	return s
}

// Run assigns objects until ctx ends; it is a leader-only Runnable.
func (s *sharder) Run(ctx context.Context) error {
	defer s.queue.ShutDown()
	f := informers.NewSharedInformerFactoryWithOptions(s.op.clientset, 0, informers.WithNamespace(s.op.opts.LeaderElection.Namespace))
	s.leases = f.Coordination().V1().Leases().Informer()
	if _, err := s.leases.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.membersChanged() },
		UpdateFunc: func(any, any) { s.membersChanged() },
		DeleteFunc: func(any) { s.membersChanged() },
	}); err != nil {
		return err
	}
	syncs := []cache.InformerSynced{s.leases.HasSynced}
	for _, c := range s.op.controllers {
		sk, ok := c.(shardable)
		if !ok {
			continue
		}
		gvr, namespaced := sk.shardedResource()
		k := &shardedKind{controller: c.controllerName(), gvr: gvr}
		for _, ns := range s.op.namespaces(namespaced) {
			inf := metadatainformer.NewFilteredMetadataInformer(s.op.metadata, gvr, ns, 0, cache.Indexers{}, nil).Informer()
			if err := inf.SetTransform(shardTransform); err != nil {
				return err
			}
			kind := len(s.kinds)
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { s.enqueue(kind, obj) },
				UpdateFunc: func(_, obj any) { s.enqueue(kind, obj) },
				DeleteFunc: func(obj any) { s.forget(kind, obj) },
			}); err != nil {
				return err
			}
			k.informers = append(k.informers, inf)
			syncs = append(syncs, inf.HasSynced)
		}
		s.kinds = append(s.kinds, k)
	}
	f.Start(ctx.Done())
	for _, k := range s.kinds {
		for _, inf := range k.informers {
			go inf.RunWithContext(ctx)
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		return nil
	}
	s.log.Info("sharding", "controllers", len(s.kinds), "members", s.liveMembers())
	s.membersChanged()
	var wg sync.WaitGroup
	for range sharderWorkers {
		wg.Go(func() {
			for s.processNext(ctx) {
			}
		})
	}
	// Leases expire without an event: look again every RetryPeriod.
	wait.UntilWithContext(ctx, func(context.Context) { s.membersChanged() }, s.op.opts.LeaderElection.RetryPeriod/2)
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

// shardTransform keeps of an object what the sharder reads: name,
// namespace, resource version and labels.
func shardTransform(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion, Labels: m.Labels,
	}}, nil
}

// shardable is a controller the sharder assigns the objects of.
type shardable interface {
	shardedResource() (gvr schema.GroupVersionResource, namespaced bool)
}

func (s *sharder) enqueue(kind int, obj any) {
	if m, err := meta.Accessor(obj); err == nil {
		s.queue.Add(shardItem{kind: kind, namespace: m.GetNamespace(), name: m.GetName()})
	}
}

func (s *sharder) forget(kind int, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		s.mu.Lock()
		delete(s.drains, shardItem{kind: kind, namespace: m.GetNamespace(), name: m.GetName()})
		s.mu.Unlock()
	}
}

// membersChanged recomputes the live members from the Leases; when the
// set changed, every object is looked at again.
func (s *sharder) membersChanged() {
	if s.leases == nil {
		return
	}
	now := s.op.opts.Clock.Now()
	live := map[string]bool{}
	s.mu.Lock()
	seen := map[string]bool{}
	for _, obj := range s.leases.GetStore().List() {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok || !strings.HasPrefix(l.Name, s.keys.leasePrefix) {
			continue
		}
		seen[l.Name] = true
		holder, renew := "", ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		if l.Spec.RenewTime != nil {
			renew = l.Spec.RenewTime.String()
		}
		d := s.op.opts.LeaderElection.LeaseDuration
		if l.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		m := s.members[l.Name]
		if m == nil || m.holder != holder || m.renew != renew {
			m = &memberSeen{holder: holder, renew: renew, duration: d, seen: now}
			s.members[l.Name] = m
		}
		if holder != "" && now.Sub(m.seen) < m.duration {
			live[strings.TrimPrefix(l.Name, s.keys.leasePrefix)] = true
		}
	}
	for name := range s.members {
		if !seen[name] {
			delete(s.members, name)
		}
	}
	changed := len(live) != len(s.live)
	for m := range live {
		changed = changed || !s.live[m]
	}
	if changed {
		members := make([]string, 0, len(live))
		for m := range live {
			members = append(members, m)
		}
		s.live, s.ring = live, shard.NewRing(members, 0)
	}
	s.mu.Unlock()
	if !changed {
		return
	}
	s.op.metrics.shardMembers.Set(float64(len(live)))
	s.log.Info("members changed", "members", s.liveMembers())
	for i, k := range s.kinds {
		for _, inf := range k.informers {
			for _, obj := range inf.GetStore().List() {
				s.enqueue(i, obj)
			}
		}
	}
}

func (s *sharder) liveMembers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ring.Members()
}

func (s *sharder) processNext(ctx context.Context) bool {
	it, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(it)
	if err := s.place(ctx, it); err != nil {
		if ctx.Err() != nil {
			return false // stopping: the next leader places it
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			s.log.Error(err, "could not label an object; retrying", "controller", s.kinds[it.kind].controller, "namespace", it.namespace, "name", it.name)
		}
		if !apierrors.IsNotFound(err) {
			s.queue.AddRateLimited(it)
			return true
		}
	}
	s.queue.Forget(it)
	return true
}

// place applies the sharder's decision for one object.
func (s *sharder) place(ctx context.Context, it shardItem) error {
	k := s.kinds[it.kind]
	var obj metav1.Object
	for _, inf := range k.informers {
		key := it.name
		if it.namespace != "" {
			key = it.namespace + "/" + it.name
		}
		if o, ok, _ := inf.GetStore().GetByKey(key); ok {
			obj, _ = meta.Accessor(o)
			break
		}
	}
	if obj == nil {
		return nil
	}
	labels := obj.GetLabels()
	s.mu.Lock()
	ring, live := s.ring, s.live
	s.mu.Unlock()
	d, act := shard.Decide(shard.Object{
		Key:      it.namespace + "/" + it.name,
		Owner:    labels[s.keys.label],
		Draining: labels[s.keys.drain] != "",
	}, ring, func(m string) bool { return live[m] })
	if !act {
		return nil
	}
	var patch map[string]*string
	switch d.Verb {
	case shard.Assign, shard.Reassign:
		patch = map[string]*string{s.keys.label: &d.To, s.keys.drain: nil}
	case shard.Drain:
		patch = map[string]*string{s.keys.drain: &d.From}
	}
	_, err := s.op.metadata.Resource(k.gvr).Namespace(it.namespace).Patch(ctx, it.name, types.MergePatchType,
		labelPatch(obj.GetResourceVersion(), patch), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	var handover time.Duration
	s.mu.Lock()
	switch d.Verb {
	case shard.Drain:
		s.drains[it] = s.op.opts.Clock.Now()
	case shard.Assign, shard.Reassign:
		if t, ok := s.drains[it]; ok {
			handover = s.op.opts.Clock.Since(t)
			delete(s.drains, it)
		}
	}
	s.mu.Unlock()
	s.op.emit(telemetry.ShardMoved{Controller: k.controller, Key: cache.ObjectName{Namespace: it.namespace, Name: it.name},
		Verb: string(d.Verb), From: d.From, To: d.To, Handover: handover})
	return nil
}

// shardedResource names the controller's kind for the sharder.
func (c *Controller[T]) shardedResource() (schema.GroupVersionResource, bool) {
	return c.kind.GVR(), c.kind.Namespaced
}

// release lets go of an object the sharder asked this member to drain: it
// runs in the worker that holds key, so no action on the object runs
// meanwhile, and none starts here after it (the object leaves this
// member's cache with its label).
func (c *Controller[T]) release(ctx context.Context, key cache.ObjectName, obj T) {
	err := c.op.shard.release(ctx, c.op, c.kind.GVR(), obj)
	switch {
	case apierrors.IsNotFound(err):
		c.queue.Forget(key)
	case err != nil:
		if !apierrors.IsConflict(err) {
			c.log.Error(err, "could not let go of an object the sharder moves; retrying", "namespace", key.Namespace, "name", key.Name)
		}
		c.queue.AddRateLimited(key)
	default:
		c.queue.Forget(key)
		c.forget(key)
		c.op.emit(telemetry.ShardMoved{Controller: c.name, Key: key, Verb: "release", From: c.op.shard.member})
	}
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
