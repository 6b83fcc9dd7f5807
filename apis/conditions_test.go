package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opgen-sdk/opgen/apis"
)

type thing struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Status apis.Status
}

func (t *thing) DeepCopyObject() runtime.Object     { c := *t; return &c }
func (t *thing) GetConditions() []metav1.Condition  { return t.Status.Conditions }
func (t *thing) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }

func status(o apis.ConditionsObject, typ string) metav1.ConditionStatus {
	for _, c := range o.GetConditions() {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func TestMarkTransitions(t *testing.T) {
	o := &thing{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	apis.MarkReconciling(o, "Scaling", "2 of 3 ready")
	assert.Equal(t, metav1.ConditionTrue, status(o, apis.Reconciling))
	assert.Equal(t, metav1.ConditionFalse, status(o, apis.Ready))

	apis.MarkDegraded(o, "QuotaExceeded", "no room")
	assert.Equal(t, metav1.ConditionTrue, status(o, apis.Degraded))
	assert.False(t, apis.IsTrue(o, apis.Ready))

	apis.MarkReady(o, "Available", "all replicas ready")
	assert.True(t, apis.IsTrue(o, apis.Ready))
	assert.Equal(t, metav1.ConditionFalse, status(o, apis.Reconciling))
	assert.Equal(t, metav1.ConditionFalse, status(o, apis.Degraded))
	for _, c := range o.GetConditions() {
		assert.Equal(t, int64(4), c.ObservedGeneration, "conditions carry the generation they describe")
	}
}

func TestSetConditionKeepsTransitionTimeWhileStatusHolds(t *testing.T) {
	var conds []metav1.Condition
	assert.True(t, apis.SetCondition(&conds, 1, apis.Ready, metav1.ConditionTrue, "A", "first"))
	first := conds[0].LastTransitionTime
	conds[0].LastTransitionTime = metav1.NewTime(first.Add(-60e9)) // pretend it was a minute ago
	assert.True(t, apis.SetCondition(&conds, 2, apis.Ready, metav1.ConditionTrue, "B", "second"), "reason and message changes count as a change")
	assert.Equal(t, first.Add(-60e9).Unix(), conds[0].LastTransitionTime.Unix(), "the status did not change, so neither does the transition time")
	assert.False(t, apis.SetCondition(&conds, 2, apis.Ready, metav1.ConditionTrue, "B", "second"), "setting the same condition changes nothing")
}
