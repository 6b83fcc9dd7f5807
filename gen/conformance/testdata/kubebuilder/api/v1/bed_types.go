package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Site is embedded in the spec of every garden kind.
type Site struct {
	// Plot names where the bed is.
	Plot string `json:"plot,omitempty"`
}

// BedSpec is what a bed should grow.
type BedSpec struct {
	Site `json:",inline"`

	// Crop is what grows; a linter of the team reads the OneOf marker,
	// which controller-tools does not know.
	// +kubebuilder:validation:OneOf=Beans;Kale
	// +kubebuilder:validation:Enum=Beans;Kale
	Crop string `json:"crop"`

	// Cover may be null: the marker is +nullable, written the wrong way.
	// +kubebuilder:validation:nullable
	// +optional
	Cover *bool `json:"cover,omitempty"`

	// Rows is optional: the marker is in lower case.
	// +kubebuilder:validation:optional
	Rows *int32 `json:"rows,omitempty"`

	// Soil keeps what it does not know.
	Soil Soil `json:"soil,omitempty"`
}

// Soil keeps its unknown fields in Rest, which is never serialized as
// such; the type copies itself.
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type Soil struct {
	// Kind of soil.
	Kind string         `json:"kind,omitempty"`
	Rest map[string]any `json:"-"`
}

// DeepCopyInto copies in into out.
func (in *Soil) DeepCopyInto(out *Soil) {
	*out = *in
	if in.Rest != nil {
		out.Rest = make(map[string]any, len(in.Rest))
		for k, v := range in.Rest {
			out.Rest[k] = v
		}
	}
}

// DeepCopy copies in.
func (in *Soil) DeepCopy() *Soil {
	if in == nil {
		return nil
	}
	out := new(Soil)
	in.DeepCopyInto(out)
	return out
}

// BedStatus is what the bed grows now.
type BedStatus struct {
	// +optional
	Planted int32 `json:"planted,omitempty"`
}

// Bed is a garden bed.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Crop,type=string,JSONPath=.spec.crop
type Bed struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BedSpec   `json:"spec,omitempty"`
	Status BedStatus `json:"status,omitempty"`
}

// BedList is a list of Bed.
// +kubebuilder:object:root=true
type BedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Bed `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Bed{}, &BedList{})
}
