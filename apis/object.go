package apis

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is the constraint of opgen's typed controllers, actions and steps: a
// pointer to a Kubernetes object type, such as *hellov1.Greeting or
// *corev1.Pod.
type Object interface {
	metav1.Object
	runtime.Object
}

// ObservedGenerationObject is implemented by objects whose status records
// the generation the controller last acted on. opgen generates these methods
// for every kind whose status has an ObservedGeneration field (embedding
// Status gives one). The runtime uses them to tell Add and Modify from
// Reconcile across restarts; see pkg/runtime.
type ObservedGenerationObject interface {
	Object
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

// ConditionsObject is implemented by objects whose status carries
// metav1.Conditions. opgen generates these methods for every kind whose status
// has a Conditions []metav1.Condition field.
type ConditionsObject interface {
	Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}
