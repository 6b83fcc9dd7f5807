// Package testing declares, for a test, a kind of the same group version
// as its parent.
// +groupName=testdata.kubebuilder.io
// +versionName=v1
package testing

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Job is a kind of the same group version, declared elsewhere.
// +kubebuilder:object:root=true
type Job struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Command is what the job runs.
	Command []string `json:"command"`
}
