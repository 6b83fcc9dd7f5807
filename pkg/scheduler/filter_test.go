package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/scheduler"
)

func readyNode(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"disk": "ssd"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func TestFits(t *testing.T) {
	taint := corev1.Taint{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name string
		node *corev1.Node
		pod  corev1.PodSpec
		want bool
	}{
		{"ready and untainted", readyNode("n"), corev1.PodSpec{}, true},
		{"cordoned", readyNode("n", func(n *corev1.Node) { n.Spec.Unschedulable = true }), corev1.PodSpec{}, false},
		{"not ready", readyNode("n", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }), corev1.PodSpec{}, false},
		{"no Ready condition", readyNode("n", func(n *corev1.Node) { n.Status.Conditions = nil }), corev1.PodSpec{}, false},
		{"taint not tolerated", readyNode("n", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{taint} }), corev1.PodSpec{}, false},
		{"taint tolerated", readyNode("n", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{taint} }),
			corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}, true},
		{"PreferNoSchedule ignored", readyNode("n", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}
		}), corev1.PodSpec{}, true},
		{"nodeSelector matched", readyNode("n"), corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}, true},
		{"nodeSelector not matched", readyNode("n"), corev1.PodSpec{NodeSelector: map[string]string{"disk": "hdd"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scheduler.Fits(&corev1.Pod{Spec: tt.pod}, tt.node))
		})
	}
}

// TestFilterIsLazy: nodes are taken from the source only as the consumer
// iterates, so a scheduler that takes the first fit checks no more.
func TestFilterIsLazy(t *testing.T) {
	nodes := []*corev1.Node{readyNode("a", func(n *corev1.Node) { n.Spec.Unschedulable = true }), readyNode("b"), readyNode("c"), readyNode("d")}
	pulled := 0
	source := func(yield func(*corev1.Node) bool) {
		for _, n := range nodes {
			pulled++
			if !yield(n) {
				return
			}
		}
	}
	for n := range scheduler.Filter(&corev1.Pod{}, source) {
		assert.Equal(t, "b", n.Name, "the cordoned node is skipped")
		break
	}
	assert.Equal(t, 2, pulled)
}
