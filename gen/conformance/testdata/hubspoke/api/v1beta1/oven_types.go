package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OvenSpec is how an oven should bake.
type OvenSpec struct {
	// Heat is a setting like "220C" in v1beta1.
	Heat string `json:"heat"`
	// Fan says whether the fan runs.
	// +optional
	Fan bool `json:"fan,omitempty"`
}

// OvenStatus is what the oven does now.
type OvenStatus struct {
	// +optional
	Baking bool `json:"baking,omitempty"`
}

// Oven bakes.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Oven struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OvenSpec   `json:"spec,omitempty"`
	Status OvenStatus `json:"status,omitempty"`
}

// OvenList is a list of Oven.
// +kubebuilder:object:root=true
type OvenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Oven `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Oven{}, &OvenList{})
}
