package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// ErrLostMembership is returned by Run when a sharded replica could not
// renew its member Lease in time. It stopped working, so that the sharder
// can give its buckets to the others. Exit and let the Pod restart.
var ErrLostMembership = errors.New("runtime: lost the member lease of sharding; stopped working so that the objects can move to other replicas")

// sharding is an operator's part in sharding (Options.Sharding): the
// keys of its buckets and its membership, and what package shard needs of
// the operator.
type sharding struct {
	keys   *shard.Keys
	member *shard.Member
	env    shard.Env
}

// newSharding returns the part in sharding of o, whose clients are built.
func newSharding(o *Operator) *sharding {
	le := o.opts.LeaderElection
	keys := shard.NewKeys(o.opts.Name, le.Namespace, le.LeaseName, le.Identity)
	env := shard.Env{
		Keys:          keys,
		Coordination:  o.kube.Coordination,
		Leases:        o.kube.Leases,
		Metadata:      o.kube.Metadata,
		Clock:         o.opts.Clock,
		Identity:      le.Identity,
		LeaseDuration: le.LeaseDuration,
		RetryPeriod:   le.RetryPeriod,
		Log:           o.log.WithName("member"),
		Hooks: shard.Hooks{
			Moved: func(mv shard.Move, handover time.Duration) {
				o.bus.Emit(telemetry.ShardMoved{Bucket: mv.Bucket, Verb: string(mv.Verb), From: mv.From, To: mv.To, Handover: handover})
			},
			Members: func(n int) { o.metrics.ShardMembers.Set(float64(n)) },
			Buckets: func(n int) { o.metrics.ShardBuckets.Set(float64(n)) },
		},
	}
	return &sharding{keys: keys, member: shard.NewMember(env), env: env}
}

// sharder returns the sharder of the controllers' kinds.
func (s *sharding) sharder(controllers []runner, log logr.Logger) (*shard.Sharder, error) {
	env := s.env
	env.Log = log.WithName("sharder")
	var kinds []shard.Kind // the kinds to label; none under the server's selector
	for _, c := range controllers {
		sk, ok := c.(shardable)
		if !ok || env.Keys.Server {
			continue
		}
		k, err := sk.shardKind(env.Keys.Unlabelled())
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	return shard.NewSharder(env, kinds), nil
}

// lead runs the sharded replica o whose member m joined at start: the
// controllers' workers on its own share while it holds its member Lease
// (from now: the caches synced), and the sharder and the Runnables while
// it leads. Either Lease lost stops both: Run returns ErrLostMembership or
// ErrLostLeadership.
func (m *memberRun) lead(ctx context.Context, o *Operator) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	close(m.synced)
	go func() {
		<-m.done
		if m.err != nil {
			cancel(m.err)
		}
	}()
	// The sharder's caches fill while this replica stands by: a new
	// leader assigns the buckets of a member that died with the old one
	// as soon as that member's Lease expired.
	// They are cache fills like the controllers': the filter cuts what
	// the caches drop (managedFields, the spec under CacheSpec) before
	// the decode.
	sh, err := o.sharding.sharder(o.plan.controllers, o.log)
	if err == nil {
		err = sh.Watch(cachefill.Fill(ctx))
	}
	if err != nil {
		m.cancel(err)
		<-m.done
		return err
	}
	el := o.opts.LeaderElection.elector(o.kube.Leases, o.opts.Clock, o.fence, o.opts.LeaderElection.LeaseName, "became leader", ErrLostLeadership, o.log)
	leadErr := el.Run(ctx, func(leadCtx context.Context) bool {
		return o.workOn(leadCtx, nil, append(o.leaderRunnables(), sh), true)
	})
	if leadErr != nil {
		m.cancel(leadErr)
	}
	<-m.done
	if m.err != nil {
		return m.err
	}
	return leadErr
}

// memberRun is this replica's membership: it holds the member Lease from
// Run's start, and its workers start once synced is closed.
type memberRun struct {
	cancel context.CancelCauseFunc
	synced chan struct{}
	done   chan struct{}
	err    error
}

// joinSharding starts holding the member Lease of replica o until ctx
// ends or stop: its workers run on its share from when synced is closed,
// while it holds the Lease. The Lease is released once they drained.
func joinSharding(ctx context.Context, o *Operator) *memberRun {
	ctx, cancel := context.WithCancelCause(ctx)
	m := &memberRun{cancel: cancel, synced: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		k := o.sharding.keys
		e := o.opts.LeaderElection.elector(o.kube.Leases, o.opts.Clock, o.fence, k.LeasePrefix+k.Member, "joined as a member of sharding", ErrLostMembership, o.log.WithName("member"))
		m.err = e.Run(ctx, func(memberCtx context.Context) bool {
			select {
			case <-m.synced:
			case <-memberCtx.Done():
				return true // never worked: nothing left behind
			}
			var follow sync.WaitGroup
			follow.Go(func() { o.sharding.member.Follow(memberCtx) })
			drained := o.workOn(memberCtx, o.plan.controllers, nil, false)
			follow.Wait()
			return drained
		})
	}()
	return m
}

// stop leaves: the Lease is released once the workers drained.
func (m *memberRun) stop() {
	m.cancel(nil)
	<-m.done
}

// shardable is a controller the sharder labels the objects of.
type shardable interface {
	// shardKind returns the controller's kind as the sharder watches it:
	// its objects (as the kind selects them) that also match selector.
	shardKind(selector string) (shard.Kind, error)
}

func (c *Controller[T]) shardKind(selector string) (shard.Kind, error) {
	k := shard.Kind{Controller: c.name, Resource: c.op.kube.Metadata.Resource(c.kind.GVR())}
	for _, ns := range c.op.opts.namespaces(c.kind.Namespaced) {
		inf, err := c.kindInformer(ns, telemetry.Watch{Controller: "sharder", GVK: c.kind.GVK, Namespace: ns}, shard.Share{Label: selector})
		if err != nil {
			return k, err
		}
		if err := inf.SetTransform(shard.Transform); err != nil {
			return k, err
		}
		k.Informers = append(k.Informers, inf)
	}
	return k, nil
}

// shardFilter is a controller's part in sharding: the objects of this
// member's share.
type shardFilter[T apis.Object] struct {
	keys       *shard.Keys
	member     *shard.Member
	objects    *objects[T]
	namespaced bool
}

// holds reports whether obj is in a bucket this member holds.
func (s *shardFilter[T]) holds(obj T) bool {
	b, ok := s.keys.BucketOf(obj)
	return ok && s.member.Holds(b)
}

// enter reports whether this member holds obj's bucket, and holds on to
// it until exit is called: a release waits for the action.
func (s *shardFilter[T]) enter(obj T) (exit func(), ok bool) {
	b, ok := s.keys.BucketOf(obj)
	if !ok || !s.member.Enter(b) {
		return nil, false
	}
	return func() { s.member.Exit(b) }, true
}

// bucketLabel is the bucket label of an owned object: its controller
// owner's, as the cache holds the owner.
func (s *shardFilter[T]) bucketLabel(owned metav1.Object) string {
	ns, ref := owned.GetNamespace(), metav1.GetControllerOfNoCopy(owned)
	if ref == nil {
		ref = &metav1.OwnerReference{}
	}
	if !s.namespaced {
		ns = ""
	}
	owner, _ := s.objects.get(cache.ObjectName{Namespace: ns, Name: ref.Name})
	return s.keys.OwnerLabel(ns, ref.Name, ref.UID, owner)
}
