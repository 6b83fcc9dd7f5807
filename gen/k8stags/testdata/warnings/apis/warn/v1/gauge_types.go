package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Gauge is a kind whose tags give warnings.
// +kubebuilder:object:root=true
type Gauge struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GaugeSpec `json:"spec"`
}

// GaugeList is a list of Gauges.
// +kubebuilder:object:root=true
type GaugeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gauge `json:"items"`
}

// GaugeSpec has the tags.
type GaugeSpec struct {
	// +k8s:optional
	// +k8s:maxLength=10
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name,omitempty"`
	// +k8s:optional
	// +k8s:minimum=5
	// +kubebuilder:validation:Minimum=1
	Size int32 `json:"size,omitempty"`
	// +k8s:required
	// +optional
	Mode string `json:"mode,omitempty"`
	// +k8s:optional
	// +k8s:format=k8s-ip
	Address string `json:"address,omitempty"`
	// +k8s:optional
	// +k8s:ifEnabled(Feature)=+k8s:maxLength=3
	Gated string `json:"gated,omitempty"`
	// +k8s:optional
	// +k8s:customValidation
	Custom string `json:"custom,omitempty"`
	// +k8s:optional
	// +k8s:eachVal=+k8s:alpha=+k8s:maxLength=3
	Words []string `json:"words,omitempty"`
	// +k8s:optional
	// +k8s:eachKey=+k8s:enum
	Keys map[string]string `json:"keys,omitempty"`
	// +k8s:optional
	// +k8s:subfield(name=+k8s:required
	Broken string `json:"broken,omitempty"`
	// +k8s:optional
	// +k8s:conversion-gen=false
	Other string `json:"other,omitempty"`
}
