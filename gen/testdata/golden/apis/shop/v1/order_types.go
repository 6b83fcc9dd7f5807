package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opgen-sdk/opgen/apis"
)

// OrderSpec is what was ordered.
type OrderSpec struct {
	// Items are SKUs.
	// +kubebuilder:validation:MinItems=1
	Items []string `json:"items"`
	// Quantity of each item.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	Quantity int32 `json:"quantity,omitempty"`
}

// OrderStatus embeds apis.Status.
type OrderStatus struct {
	apis.Status `json:",inline"`
	// Shipped counts shipped items.
	// +optional
	Shipped int32 `json:"shipped,omitempty"`
}

// Order is an order in the shop.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Shipped,type=integer,JSONPath=.status.shipped
// +opgen:controller:owns=apps/v1.Deployment;v1.Secret
// +opgen:controller:reconcileEvery=90s
// +opgen:controller:workers=3
// +opgen:controller:reads=v1.ConfigMap;policy/v1.PodDisruptionBudget
// +opgen:controller:watches=v1.ConfigMap,map=ordersOfConfigMap
type Order struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OrderSpec   `json:"spec"`
	Status OrderStatus `json:"status,omitempty"`
}

// OrderList is a list of Orders.
//
// +kubebuilder:object:root=true
type OrderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Order `json:"items"`
}

// Shipper is an interface in an API package: it gets no deep copy, though
// the package asks for deep copies of all its types.
type Shipper interface {
	runtime.Object
	Ship() error
}
