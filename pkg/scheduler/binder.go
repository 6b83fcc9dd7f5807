package scheduler

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Event reasons, as kube-scheduler gives them.
const (
	ReasonScheduled        = "Scheduled"
	ReasonFailedScheduling = "FailedScheduling"
)

// binder is the scheduler's handler for its Pods: every verb places the
// pod.
type binder struct {
	op    *runtime.Operator
	s     Scheduler
	opts  Options
	nodes corelisters.NodeLister
	pods  *runtime.Controller[*corev1.Pod]

	mu      sync.Mutex
	waiting map[cache.ObjectName]bool // pods that fit nowhere, woken by node changes
}

var _ plug.Handler[*corev1.Pod] = (*binder)(nil)

func newBinder(op *runtime.Operator, s Scheduler, opts Options) *binder {
	b := &binder{op: op, s: s, opts: opts, nodes: nodeLister(op), waiting: map[cache.ObjectName]bool{}}
	subscribeMetrics(op, opts.Name)
	return b
}

func (b *binder) Add(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	return b.schedule(ctx, a.Object)
}

func (b *binder) Modify(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	return b.schedule(ctx, a.Object)
}

func (b *binder) Reconcile(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	return b.schedule(ctx, a.Object)
}

// schedule selects a node for pod and binds it; an error retries the pod
// with backoff.
func (b *binder) schedule(ctx context.Context, pod *corev1.Pod) error {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return nil
	}
	start := time.Now()
	node, err := b.s.SelectNode(ctx, pod, b.candidates(ctx, pod))
	if err == nil && node == nil {
		err = ErrUnschedulable
	}
	if err == nil {
		err = b.bind(ctx, pod, node.Name)
	}
	if err != nil {
		return b.failed(pod, err, time.Since(start))
	}
	b.bound(pod, node.Name, time.Since(start))
	return nil
}

func (b *binder) candidates(ctx context.Context, pod *corev1.Pod) iter.Seq[*corev1.Node] {
	if b.opts.Candidates != nil {
		return b.opts.Candidates(ctx, pod)
	}
	nodes, err := b.fetchNodes()
	if err != nil {
		return func(func(*corev1.Node) bool) {}
	}
	slices.SortFunc(nodes, func(x, y *corev1.Node) int { return strings.Compare(x.Name, y.Name) })
	return Filter(pod, slices.Values(nodes))
}

// errBoundMeanwhile ends a binding whose pod got a node from elsewhere.
var errBoundMeanwhile = errors.New("the pod was bound meanwhile")

// bind binds pod to node with the binding subresource. A conflict is
// retried unless the pod has a node now.
func (b *binder) bind(ctx context.Context, pod *corev1.Pod, node string) error {
	pods := b.op.Clientset().CoreV1().Pods(pod.Namespace)
	err := retry.OnError(retry.DefaultRetry, apierrors.IsConflict, func() error {
		err := pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
		if apierrors.IsConflict(err) {
			if cur, gerr := pods.Get(ctx, pod.Name, metav1.GetOptions{}); gerr == nil && cur.Spec.NodeName != "" {
				return errBoundMeanwhile
			}
		}
		return err
	})
	if errors.Is(err, errBoundMeanwhile) || apierrors.IsNotFound(err) {
		return nil // bound by someone else, or deleted: nothing left to do
	}
	if err != nil {
		return fmt.Errorf("bind to node %s: %w", node, err)
	}
	return nil
}

func (b *binder) bound(pod *corev1.Pod, node string, d time.Duration) {
	key := cache.MetaObjectToName(pod)
	b.setWaiting(key, false)
	b.op.Recorder().Eventf(pod, nil, corev1.EventTypeNormal, ReasonScheduled, "Binding",
		"Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node)
	b.op.Telemetry().Emit(telemetry.BindSucceeded{Binding: telemetry.Binding{Scheduler: b.opts.Name, Pod: key}, Node: node, Duration: d})
}

func (b *binder) failed(pod *corev1.Pod, err error, d time.Duration) error {
	key := cache.MetaObjectToName(pod)
	unschedulable := errors.Is(err, ErrUnschedulable)
	b.setWaiting(key, unschedulable)
	b.op.Recorder().Eventf(pod, nil, corev1.EventTypeWarning, ReasonFailedScheduling, "Scheduling", "%s", err.Error())
	b.op.Telemetry().Emit(telemetry.BindFailed{Binding: telemetry.Binding{Scheduler: b.opts.Name, Pod: key}, Err: err, Unschedulable: unschedulable, Duration: d})
	return err
}

func (b *binder) setWaiting(key cache.ObjectName, waiting bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if waiting {
		b.waiting[key] = true
	} else {
		delete(b.waiting, key)
	}
}

// wake returns the waiting pods when a node changes, dropping those that
// left the scheduler's cache (bound elsewhere or deleted).
func (b *binder) wake(metav1.Object) []cache.ObjectName {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]cache.ObjectName, 0, len(b.waiting))
	for key := range b.waiting {
		if _, ok := b.pods.Get(key); !ok {
			delete(b.waiting, key)
			continue
		}
		out = append(out, key)
	}
	return out
}
