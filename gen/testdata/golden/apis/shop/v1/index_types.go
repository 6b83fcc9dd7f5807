package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IndexStatus has its own fields.
type IndexStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Index is cluster-scoped, has no status subresource and an irregular
// plural set with path.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,path=indexes,singular=index
// +opgen:controller
type Index struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status IndexStatus `json:"status,omitempty"`
}

// GetConditions is the user's own: opgen does not generate it again.
func (in *Index) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions is the user's own too.
func (in *Index) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// IndexList is a list of Indexes.
//
// +kubebuilder:object:root=true
type IndexList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Index `json:"items"`
}
