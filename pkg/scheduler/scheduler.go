package scheduler

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
)

// Scheduler picks a node for a pod.
type Scheduler interface {
	// SelectNode returns the node to bind pod to, or nil (or an error
	// wrapping ErrUnschedulable) when none fits. Another error is
	// reported the same way and retried. nodes are the candidates
	// (Options.Candidates), cached objects: read, do not change them.
	// pod is a copy it may change; changes are not written.
	SelectNode(ctx context.Context, pod *corev1.Pod, nodes iter.Seq[*corev1.Node]) (*corev1.Node, error)
}

// Func adapts a function to a Scheduler.
type Func func(ctx context.Context, pod *corev1.Pod, nodes iter.Seq[*corev1.Node]) (*corev1.Node, error)

// SelectNode calls f.
func (f Func) SelectNode(ctx context.Context, pod *corev1.Pod, nodes iter.Seq[*corev1.Node]) (*corev1.Node, error) {
	return f(ctx, pod, nodes)
}

var _ Scheduler = Func(nil)

// ErrUnschedulable says that no node fits the pod; SelectNode may return
// it (wrapped, with the reason) instead of a nil node.
var ErrUnschedulable = errors.New("no node fits the pod")

// Options configure a scheduler.
type Options struct {
	// Name is the scheduler's name: the Pods whose spec.schedulerName is
	// Name are its own, and it names the controller, the events'
	// reporting instance and the metrics' label. Required.
	Name string

	// Candidates returns the nodes offered to SelectNode for pod.
	// Default: every node in the operator's node cache, sorted by name,
	// that Fits pod, filtered lazily as SelectNode iterates.
	Candidates func(ctx context.Context, pod *corev1.Pod) iter.Seq[*corev1.Node]

	// Workers is the number of pods placed at once. Default 1, so each
	// decision sees the previous one's binding.
	Workers int

	// InitialBackoff and MaxBackoff pace the retries of a pod that could
	// not be placed: the delay starts at InitialBackoff and doubles up to
	// MaxBackoff. Defaults 1s and 10s, kube-scheduler's.
	InitialBackoff, MaxBackoff time.Duration
}

func (o Options) complete() (Options, error) {
	if o.Name == "" {
		return o, errors.New("scheduler.Register: set Options.Name to the scheduler's name, the spec.schedulerName its Pods give")
	}
	if o.Workers == 0 {
		o.Workers = 1
	}
	if o.InitialBackoff == 0 {
		o.InitialBackoff = time.Second
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.Workers < 0 || o.InitialBackoff < 0 || o.MaxBackoff < o.InitialBackoff {
		return o, fmt.Errorf("scheduler.Register: scheduler %s: Workers (%d) must not be negative and MaxBackoff (%s) must be at least InitialBackoff (%s)",
			o.Name, o.Workers, o.MaxBackoff, o.InitialBackoff)
	}
	return o, nil
}

// Register adds a scheduler named opts.Name, which places its Pods with
// s, to op. Call it before op.Run.
func Register(op *runtime.Operator, s Scheduler, opts Options) error {
	if s == nil {
		return errors.New("scheduler.Register: the Scheduler is nil")
	}
	opts, err := opts.complete()
	if err != nil {
		return err
	}
	b := newBinder(op, s, opts)
	pods := builtin.Pods(op, builtin.Options{FieldSelector: fields.AndSelectors(
		fields.OneTermEqualSelector("spec.schedulerName", opts.Name),
		fields.OneTermEqualSelector("spec.nodeName", ""),
	).String()})
	ctrl, err := runtime.Register(op, pods, plug.Handler[*corev1.Pod](b), runtime.ControllerOptions[*corev1.Pod]{
		Name:        "scheduler-" + opts.Name,
		Workers:     opts.Workers,
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](opts.InitialBackoff, opts.MaxBackoff),
		Watches:     []runtime.Watch{{Kind: corev1.SchemeGroupVersion.WithKind("Node"), Map: b.wake}},
		Pipeline: func(_ plug.Env[*corev1.Pod], h plug.Handler[*corev1.Pod]) plug.Pipeline[*corev1.Pod] {
			return plug.Pipeline[*corev1.Pod]{plug.Named("Delegate", plug.Delegate(h))}
		},
	})
	if err != nil {
		return err
	}
	b.pods = ctrl
	reportPodFetches(op, opts.Name, ctrl.Name())
	return nil
}

// nodeLister returns the operator's shared node cache (started by Run).
func nodeLister(op *runtime.Operator) corelisters.NodeLister {
	return op.Informers(runtime.AllNamespaces).Core().V1().Nodes().Lister()
}
