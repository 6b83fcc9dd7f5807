package testenv

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// FakeNodeName is the Node that RunFakeKubelet binds pods to.
const FakeNodeName = "opgen-fake-node"

// RunFakeKubelet stands in for a scheduler and a kubelet, which the local
// control plane does not have, until ctx ends: it registers the Node
// FakeNodeName, binds every pending pod that names no other scheduler to it
// and reports each bound pod Running and Ready, without running anything.
// With it, Deployments reach their ready replicas and controllers that wait
// for readiness can be exercised end to end. Pods whose spec.schedulerName
// is set to something else are left alone, for custom schedulers.
//
// It returns once its cache has synced; errors after that go to onError
// (nil ignores them).
func (e *Environment) RunFakeKubelet(ctx context.Context, onError func(error)) error {
	if onError == nil {
		onError = func(error) {}
	}
	cs := e.clientset
	if err := registerNode(ctx, cs); err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			if err := runPod(ctx, cs, pod); err != nil && !ignorable(err) {
				onError(err)
			}
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("testenv: fake kubelet: %v cache did not sync", typ)
		}
	}
	return nil
}

func registerNode(ctx context.Context, cs kubernetes.Interface) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: FakeNodeName, Labels: map[string]string{"kubernetes.io/hostname": FakeNodeName}},
	}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: fake kubelet: register node: %w", err)
	}
	return nil
}

// runPod moves pod one step: pending → bound → Running and Ready.
func runPod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) error {
	switch {
	case pod.DeletionTimestamp != nil:
		// A kubelet would stop the containers; nothing runs here, so the
		// pod can go at once.
		return cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
	case pod.Spec.NodeName == "":
		if pod.Spec.SchedulerName != "" && pod.Spec.SchedulerName != corev1.DefaultSchedulerName {
			return nil
		}
		return cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: FakeNodeName},
		}, metav1.CreateOptions{})
	case pod.Spec.NodeName == FakeNodeName && pod.Status.Phase != corev1.PodRunning:
		return markRunning(ctx, cs, pod)
	}
	return nil
}

func markRunning(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) error {
	now := metav1.NewTime(time.Now())
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:    c.Name,
			Image:   c.Image,
			ImageID: c.Image,
			Ready:   true,
			Started: ptr.To(true),
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	_, err := cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// ignorable errors are the races a real kubelet shrugs off too: the pod
// changed or went away meanwhile, or its namespace is being deleted.
func ignorable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsNotFound(err) ||
		apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
