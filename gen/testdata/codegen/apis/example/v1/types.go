package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TestType is a namespaced kind with a client.
type TestType struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Status TestTypeStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TestTypeList is a list of TestType.
type TestTypeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TestType `json:"items"`
}

// TestTypeStatus is the status of a TestType.
type TestTypeStatus struct {
	Blah string `json:"blah"`
}

// +genclient
// +genclient:nonNamespaced
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:scope=Cluster

// ClusterTestType is a cluster-scoped kind with custom verbs.
type ClusterTestType struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Status ClusterTestTypeStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterTestTypeList is a list of ClusterTestType.
type ClusterTestTypeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterTestType `json:"items"`
}

// ClusterTestTypeStatus is the status of a ClusterTestType.
type ClusterTestTypeStatus struct {
	Blah string `json:"blah"`
}

// +genclient
// +genclient:noStatus
// +genclient:onlyVerbs=create,get,list,watch

// ReadOnly has a client with four verbs and a DeepCopyObject of its own.
type ReadOnly struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReadOnlySpec `json:"spec"`
}

// DeepCopyObject is written by hand, and opgen keeps it.
func (in *ReadOnly) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// ReadOnlySpec is the desired state of a ReadOnly.
type ReadOnlySpec struct {
	Size int32 `json:"size"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReadOnlyList is a list of ReadOnly.
type ReadOnlyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReadOnly `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TestSubresource is an object that is not a kind: it is registered, and
// has no CRD and no client.
type TestSubresource struct {
	metav1.TypeMeta `json:",inline"`
	Value           string `json:"value"`
}
