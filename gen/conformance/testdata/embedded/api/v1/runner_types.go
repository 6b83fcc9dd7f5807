package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunnerSpec is the desired state of a Runner.
type RunnerSpec struct {
	// Replicas is how many pods run.
	Replicas int32 `json:"replicas"`
	// Template is the pods' template: its metadata's labels and
	// annotations must survive the API server's pruning.
	Template corev1.PodTemplateSpec `json:"template"`
	// Tolerations are added to the pods.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Runner runs pods from a template.
// +genclient
// +kubebuilder:object:root=true
type Runner struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RunnerSpec `json:"spec"`
}

// RunnerList is a list of Runners.
// +kubebuilder:object:root=true
type RunnerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Runner `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Runner{}, &RunnerList{})
}
