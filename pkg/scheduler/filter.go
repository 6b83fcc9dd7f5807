package scheduler

import (
	"iter"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
)

// Fits reports whether node can take pod by what both say: the node is
// schedulable (not cordoned) and Ready, the pod tolerates its NoSchedule
// and NoExecute taints, and the node has every label of the pod's
// spec.nodeSelector. Resources, affinity and spread are not checked.
func Fits(pod *corev1.Pod, node *corev1.Node) bool {
	return !node.Spec.Unschedulable && ready(node) && tolerates(pod, node) && selects(pod, node)
}

// Filter yields the nodes that Fit pod, checking each only when the
// iteration reaches it.
func Filter(pod *corev1.Pod, nodes iter.Seq[*corev1.Node]) iter.Seq[*corev1.Node] {
	return func(yield func(*corev1.Node) bool) {
		for n := range nodes {
			if Fits(pod, n) && !yield(n) {
				return
			}
		}
	}
}

func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func tolerates(pod *corev1.Pod, node *corev1.Node) bool {
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !tolerated(pod.Spec.Tolerations, taint) {
			return false
		}
	}
	return true
}

func tolerated(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, true) {
			return true
		}
	}
	return false
}

func selects(pod *corev1.Pod, node *corev1.Node) bool {
	for k, v := range pod.Spec.NodeSelector {
		if node.Labels[k] != v {
			return false
		}
	}
	return true
}
