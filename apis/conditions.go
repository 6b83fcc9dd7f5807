package apis

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types with the meanings the Kubernetes API conventions give them.
const (
	// Ready is True when the object is fully reconciled and serving.
	Ready = "Ready"
	// Reconciling is True while the controller works towards the desired
	// state (a long-running change, a dependency not ready yet).
	Reconciling = "Reconciling"
	// Degraded is True when the controller failed to reach the desired
	// state and is retrying.
	Degraded = "Degraded"
	// Paused is True while reconciliation is suspended by the pause
	// annotation.
	Paused = "Paused"
)

// SetCondition sets the condition of type typ on conditions, stamped with
// the object's generation. LastTransitionTime changes only when the status
// does, as the conventions require. It reports whether anything changed.
func SetCondition(conditions *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		ObservedGeneration: generation,
		Reason:             reason,
		Message:            message,
	})
}

// MarkReady sets Ready=True and clears Reconciling and Degraded.
func MarkReady(obj ConditionsObject, reason, message string) {
	set(obj, func(c *[]metav1.Condition, g int64) {
		SetCondition(c, g, Ready, metav1.ConditionTrue, reason, message)
		SetCondition(c, g, Reconciling, metav1.ConditionFalse, reason, "")
		SetCondition(c, g, Degraded, metav1.ConditionFalse, reason, "")
	})
}

// MarkReconciling sets Reconciling=True and Ready=False: progress is being
// made, nothing has failed.
func MarkReconciling(obj ConditionsObject, reason, message string) {
	set(obj, func(c *[]metav1.Condition, g int64) {
		SetCondition(c, g, Reconciling, metav1.ConditionTrue, reason, message)
		SetCondition(c, g, Ready, metav1.ConditionFalse, reason, message)
	})
}

// MarkDegraded sets Degraded=True and Ready=False with the failure in the
// message.
func MarkDegraded(obj ConditionsObject, reason, message string) {
	set(obj, func(c *[]metav1.Condition, g int64) {
		SetCondition(c, g, Degraded, metav1.ConditionTrue, reason, message)
		SetCondition(c, g, Ready, metav1.ConditionFalse, reason, message)
	})
}

// IsTrue reports whether the condition of type typ is True.
func IsTrue(obj ConditionsObject, typ string) bool {
	return meta.IsStatusConditionTrue(obj.GetConditions(), typ)
}

func set(obj ConditionsObject, f func(*[]metav1.Condition, int64)) {
	c := obj.GetConditions()
	f(&c, obj.GetGeneration())
	obj.SetConditions(c)
}

// MarkPaused sets Paused=True: reconciliation is suspended on purpose.
// The other conditions keep what they said when it paused.
func MarkPaused(obj ConditionsObject, reason, message string) {
	set(obj, func(c *[]metav1.Condition, g int64) {
		SetCondition(c, g, Paused, metav1.ConditionTrue, reason, message)
	})
}

// MarkUnpaused sets Paused=False.
func MarkUnpaused(obj ConditionsObject, reason, message string) {
	set(obj, func(c *[]metav1.Condition, g int64) {
		SetCondition(c, g, Paused, metav1.ConditionFalse, reason, message)
	})
}
