package apis

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Status is the part of a status every opgen kind can share. Embed it inline:
//
//	type GreetingStatus struct {
//		apis.Status `json:",inline"`
//		URL string `json:"url,omitempty"`
//	}
type Status struct {
	// ObservedGeneration is the metadata.generation the controller last
	// handled successfully.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the latest observations of the object's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
