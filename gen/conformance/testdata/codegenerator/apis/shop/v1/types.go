package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Shop sells.
// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:storageversion
type Shop struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ShopSpec `json:"spec"`
}

// ShopSpec is what a shop should be.
type ShopSpec struct {
	Hours `json:",inline"`
	// Backend takes the orders; its type is Endpoint in v1beta1.
	Backend Target `json:"backend"`
	// Till names the cash register; v1beta1 has no such field.
	// +optional
	Till string `json:"till,omitempty"`
}

// Hours are when a shop opens.
type Hours struct {
	Opens string `json:"opens,omitempty"`
}

// Target is where orders go.
type Target struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// ShopList is a list of Shop.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ShopList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shop `json:"items"`
}

// Region groups shops; it is not namespaced.
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:storageversion
type Region struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Shops counts the shops of the region.
	Shops int32 `json:"shops,omitempty"`
}

// RegionList is a list of Region.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type RegionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Region `json:"items"`
}
