package runtime

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// ErrLostMembership is returned by Run when a sharded replica could not
// renew its member Lease in time. It stopped working, so that the sharder
// can give its buckets to the others. Exit and let the Pod restart.
var ErrLostMembership = errors.New("runtime: lost the member lease of sharding; stopped working so that the objects can move to other replicas")

// shardEnv is what package shard needs of the operator (Options.Sharding).
func (o *Operator) shardEnv() shard.Env {
	le := o.opts.LeaderElection
	return shard.Env{
		Keys:          o.shardKeys,
		Clientset:     o.clientset,
		Leases:        o.leases,
		Metadata:      o.metadata,
		Clock:         o.opts.Clock,
		Identity:      le.Identity,
		LeaseDuration: le.LeaseDuration,
		RetryPeriod:   le.RetryPeriod,
		Log:           o.log.WithName("member"),
		Hooks: shard.Hooks{
			Moved: func(mv shard.Move, handover time.Duration) {
				o.emit(telemetry.ShardMoved{Bucket: mv.Bucket, Verb: string(mv.Verb), From: mv.From, To: mv.To, Handover: handover})
			},
			Members: func(n int) { o.metrics.ShardMembers.Set(float64(n)) },
			Buckets: func(n int) { o.metrics.ShardBuckets.Set(float64(n)) },
		},
	}
}

// runMember holds this replica's member Lease and calls work with a
// context that ends when ctx ends or the Lease could not be renewed (then
// with cause ErrLostMembership). The Lease is released once work returned
// drained.
func (o *Operator) runMember(ctx context.Context, work func(ctx context.Context) bool) error {
	k := o.shardKeys
	e := o.elector(k.LeasePrefix+k.Member, "joined as a member of sharding", ErrLostMembership, o.log.WithName("member"))
	return e.Run(ctx, work)
}

// newSharder returns the sharder of every controller's kind.
func (o *Operator) newSharder() (*shard.Sharder, error) {
	env := o.shardEnv()
	env.Log = o.log.WithName("sharder")
	var kinds []shard.Kind
	for _, c := range o.controllers {
		sk, ok := c.(shardable)
		if !ok {
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

// shardable is a controller the sharder labels the objects of.
type shardable interface {
	// shardKind returns the controller's kind as the sharder watches it:
	// its objects (as the kind selects them) that also match selector.
	shardKind(selector string) (shard.Kind, error)
}

func (c *Controller[T]) shardKind(selector string) (shard.Kind, error) {
	k := shard.Kind{Controller: c.name, Resource: c.op.metadata.Resource(c.kind.GVR())}
	for _, ns := range c.op.namespaces(c.kind.Namespaced) {
		inf, err := c.kindInformer(ns, telemetry.Watch{Controller: "sharder", GVK: c.kind.GVK, Namespace: ns}, selector)
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
		if v, ok := owner.GetLabels()[c.op.shardKeys.Label]; ok {
			return v
		}
	}
	return shard.Label(shard.KeyBucket(ns, name))
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
