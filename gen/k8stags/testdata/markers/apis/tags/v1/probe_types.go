package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Probe has a field for each +k8s: tag opgen reads.
// +kubebuilder:object:root=true
type Probe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ProbeSpec `json:"spec"`
}

// ProbeList is a list of Probes.
// +kubebuilder:object:root=true
type ProbeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Probe `json:"items"`
}

// ProbeSpec holds the tagged fields.
// +kubebuilder:validation:XValidation:rule="has(oldSelf.late) || !has(self.late)",message="late may not be set once the object exists"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.sticky) || has(self.sticky)",message="sticky may not be unset once set"
// +kubebuilder:validation:XValidation:rule="!has(self.legacy)",message="legacy is forbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || has(self.cert)",message="cert is required when tls is set"
type ProbeSpec struct {
	// Name is required and short.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name"`
	// Replicas is bounded.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Replicas *int32 `json:"replicas,omitempty"`
	// Code has a minimum length.
	// +optional
	// +kubebuilder:validation:MinLength=2
	Code string `json:"code,omitempty"`
	// Ports has one to three items.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	Ports []int32 `json:"ports,omitempty"`
	// Labels has one or two entries.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=2
	Labels map[string]string `json:"labels,omitempty"`
	// Host is a short name.
	// +optional
	// +kubebuilder:validation:Format=k8s-short-name
	Host string `json:"host,omitempty"`
	// Domain is a long name.
	// +optional
	// +kubebuilder:validation:Format=k8s-long-name
	Domain string `json:"domain,omitempty"`
	// ID is a UUID.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
	ID string `json:"id,omitempty"`
	// LabelKey is a label key.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="must be a label key: an optional DNS subdomain prefix and '/', and a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
	LabelKey string `json:"labelKey,omitempty"`
	// PrefixedKey is a label key with a prefix.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.contains('/') && !format.qualifiedName().validate(self).hasValue()",message="must be a label key with a DNS subdomain prefix: <prefix>/<name>"
	PrefixedKey string `json:"prefixedKey,omitempty"`
	// LabelValue is a label value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.labelValue().validate(self).hasValue()",message="must be a label value: at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
	LabelValue string `json:"labelValue,omitempty"`
	// Segment is a path segment.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="must be a path segment name: not '.' or '..', without '/' or '%'"
	Segment string `json:"segment,omitempty"`
	// Note is at most eight bytes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="size(bytes(self)) <= 8",message="must be no more than 8 bytes"
	Note string `json:"note,omitempty"`
	// Mode is anything but none.
	// +optional
	// +kubebuilder:validation:XValidation:rule=`self != "none"`,message=`may not be "none"`
	Mode string `json:"mode,omitempty"`
	// Color is one of the Color constants.
	// +optional
	Color Color `json:"color,omitempty"`
	// Tags is a set.
	// +optional
	// +listType=set
	Tags []string `json:"tags,omitempty"`
	// Items is a map list.
	// +optional
	// +listType=map
	// +listMapKey=name
	Items []Item `json:"items,omitempty"`
	// Codes are unique.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y == x))",message="items must be unique"
	Codes []string `json:"codes,omitempty"`
	// Words are short.
	// +optional
	// +kubebuilder:validation:items:MaxLength=5
	Words []string `json:"words,omitempty"`
	// Weights are not negative.
	// +optional
	Weights map[string]Weight `json:"weights,omitempty"`
	// Annotations have label keys.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",message="each key must be a label key: an optional DNS subdomain prefix and '/', and a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
	Annotations map[string]string `json:"annotations,omitempty"`
	// Target has a required name and a bounded port.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name)",message="name is required"
	// +kubebuilder:validation:XValidation:rule="!has(self.port) || self.port <= 100",message="port must be less than or equal to 100"
	Target *Target `json:"target,omitempty"`
	// Class never changes.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Class string `json:"class"`
	// Zone may be set and unset, not changed.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="may not be modified"
	Zone string `json:"zone,omitempty"`
	// Late may not be set on an update.
	// +optional
	Late string `json:"late,omitempty"`
	// Sticky may not be unset once set.
	// +optional
	Sticky string `json:"sticky,omitempty"`
	// Frozen gets no new items.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.all(x, x in oldSelf)",message="items may not be added"
	Frozen []string `json:"frozen,omitempty"`
	// Kept loses no items.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="oldSelf.all(x, x in self)",message="items may not be removed"
	Kept []string `json:"kept,omitempty"`
	// Revision never decreases.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="may not decrease"
	Revision int64 `json:"revision,omitempty"`
	// Legacy may not be set.
	// +optional
	Legacy string `json:"legacy,omitempty"`
	// TLS needs Cert.
	// +optional
	TLS bool `json:"tls,omitempty"`
	// Cert is a certificate.
	// +optional
	Cert string `json:"cert,omitempty"`
	// Source is a union.
	// +optional
	Source *Source `json:"source,omitempty"`
	// Backend is a discriminated union.
	// +optional
	Backend *Backend `json:"backend,omitempty"`
	// Hint is a zero-or-one union.
	// +optional
	Hint *Hint `json:"hint,omitempty"`
}

// Color is a color.
// +kubebuilder:validation:Enum=blue;red
type Color string

// The colors.
const (
	ColorBlue Color = "blue"
	ColorRed  Color = "red"
	ColorGone Color = "gone"
)

// +kubebuilder:validation:Minimum=0
type Weight int32

// Item is an item of a map list.
type Item struct {
	// Name is the key.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Value is the value.
	// +optional
	Value string `json:"value,omitempty"`
}

// Target is a named port.
type Target struct {
	// Name names it.
	// +optional
	Name string `json:"name,omitempty"`
	// Port numbers it.
	// +optional
	Port int32 `json:"port,omitempty"`
}

// Source is exactly one of a few.
// +kubebuilder:validation:ExactlyOneOf=git;image
type Source struct {
	// Git is one.
	// +optional
	Git string `json:"git,omitempty"`
	// Image is another.
	// +optional
	Image string `json:"image,omitempty"`
}

// Backend is set by its type.
// +kubebuilder:validation:XValidation:rule=`has(self.service) == (has(self.type) && self.type == "Service")`,message=`service must be set exactly when type is "Service"`
// +kubebuilder:validation:XValidation:rule=`has(self.resource) == (has(self.type) && self.type == "Res")`,message=`resource must be set exactly when type is "Res"`
type Backend struct {
	// Type says which member is set.
	// +required
	// +kubebuilder:validation:MinLength=1
	Type string `json:"type"`
	// Service is set when Type is Service.
	// +optional
	Service string `json:"service,omitempty"`
	// Resource is set when Type is Res.
	// +optional
	Resource string `json:"resource,omitempty"`
}

// Hint is at most one of a few.
// +kubebuilder:validation:AtMostOneOf=fast;small
type Hint struct {
	// Fast is one.
	// +optional
	Fast bool `json:"fast,omitempty"`
	// Small is another.
	// +optional
	Small bool `json:"small,omitempty"`
}
