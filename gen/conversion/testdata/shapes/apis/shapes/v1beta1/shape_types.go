package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Tier is an enum.
// +kubebuilder:validation:Enum=dev;prod
type Tier string

// Port is the same in both versions: its conversion is a memory copy.
type Port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

// Limits differ between the versions.
type Limits struct {
	CPU    resource.Quantity  `json:"cpu"`
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// Hidden opts out of conversion generation.
// +k8s:conversion-gen=false
type Hidden struct {
	A string `json:"a"`
}

// ShapeSpec has a field of every shape.
type ShapeSpec struct {
	Name        string                       `json:"name"`
	Replicas    *int32                       `json:"replicas,omitempty"`
	Size        int32                        `json:"size,omitempty"`
	Tier        Tier                         `json:"tier,omitempty"`
	Labels      map[string]string            `json:"labels,omitempty"`
	Ports       []Port                       `json:"ports,omitempty"`
	PortsByName map[string]Port              `json:"portsByName,omitempty"`
	Primary     *Port                        `json:"primary,omitempty"`
	Limits      Limits                       `json:"limits"`
	LimitsList  []Limits                     `json:"limitsList,omitempty"`
	LimitsPtr   *Limits                      `json:"limitsPtr,omitempty"`
	Quantities  map[string]resource.Quantity `json:"quantities,omitempty"`
	Start       metav1.Time                  `json:"start,omitempty"`
	End         *metav1.Time                 `json:"end,omitempty"`
	Every       metav1.Duration              `json:"every,omitempty"`
	Surge       intstr.IntOrString           `json:"surge,omitempty"`
	MaxSurge    *intstr.IntOrString          `json:"maxSurge,omitempty"`
	Selector    *metav1.LabelSelector        `json:"selector,omitempty"`
	Resources   corev1.ResourceRequirements  `json:"resources,omitempty"`
	Template    *corev1.PodTemplateSpec      `json:"template,omitempty"`
	Raw         runtime.RawExtension         `json:"raw,omitempty"`
	Hidden      Hidden                       `json:"hidden,omitempty"`
	// Region is only in v1beta1.
	Region string `json:"region,omitempty"`
}

// ShapeStatus is the observed state.
type ShapeStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +opgen:conversion:drop
	Observed int64 `json:"observed,omitempty"`
}

// Shape is a kind served in two versions.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Shape struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ShapeSpec   `json:"spec"`
	Status ShapeStatus `json:"status,omitempty"`
}

// ShapeList is a list of Shapes.
// +kubebuilder:object:root=true
type ShapeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shape `json:"items"`
}
