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
type ProbeSpec struct {
	// Name is required and short.
	// +k8s:required
	// +k8s:maxLength=20
	Name string `json:"name"`
	// Replicas is bounded.
	// +k8s:optional
	// +k8s:minimum=1
	// +k8s:maximum=10
	Replicas *int32 `json:"replicas,omitempty"`
	// Code has a minimum length.
	// +k8s:optional
	// +k8s:minLength=2
	Code string `json:"code,omitempty"`
	// Ports has one to three items.
	// +k8s:optional
	// +k8s:minItems=1
	// +k8s:maxItems=3
	Ports []int32 `json:"ports,omitempty"`
	// Labels has one or two entries.
	// +k8s:optional
	// +k8s:minProperties=1
	// +k8s:maxProperties=2
	Labels map[string]string `json:"labels,omitempty"`
	// Host is a short name.
	// +k8s:optional
	// +k8s:format=k8s-short-name
	Host string `json:"host,omitempty"`
	// Domain is a long name.
	// +k8s:optional
	// +k8s:format=k8s-long-name
	Domain string `json:"domain,omitempty"`
	// ID is a UUID.
	// +k8s:optional
	// +k8s:format=k8s-uuid
	ID string `json:"id,omitempty"`
	// LabelKey is a label key.
	// +k8s:optional
	// +k8s:format=k8s-label-key
	// +k8s:maxLength=317
	LabelKey string `json:"labelKey,omitempty"`
	// PrefixedKey is a label key with a prefix.
	// +k8s:optional
	// +k8s:format=k8s-prefixed-label-key
	// +k8s:maxLength=317
	PrefixedKey string `json:"prefixedKey,omitempty"`
	// LabelValue is a label value.
	// +k8s:optional
	// +k8s:format=k8s-label-value
	// +k8s:maxLength=63
	LabelValue string `json:"labelValue,omitempty"`
	// Segment is a path segment.
	// +k8s:optional
	// +k8s:format=k8s-path-segment-name
	Segment string `json:"segment,omitempty"`
	// Note is at most eight bytes.
	// +k8s:optional
	// +k8s:maxBytes=8
	Note string `json:"note,omitempty"`
	// Mode is anything but none.
	// +k8s:optional
	// +k8s:neq="none"
	Mode string `json:"mode,omitempty"`
	// Color is one of the Color constants.
	// +k8s:optional
	Color Color `json:"color,omitempty"`
	// Tags is a set.
	// +k8s:optional
	// +k8s:listType=set
	Tags []string `json:"tags,omitempty"`
	// Items is a map list.
	// +k8s:optional
	// +k8s:listType=map
	// +k8s:listMapKey=name
	Items []Item `json:"items,omitempty"`
	// Codes are unique.
	// +k8s:optional
	// +k8s:listType=atomic
	// +k8s:unique=set
	// +k8s:maxItems=16
	// +k8s:eachVal=+k8s:maxLength=63
	Codes []string `json:"codes,omitempty"`
	// Words are short.
	// +k8s:optional
	// +k8s:eachVal=+k8s:maxLength=5
	Words []string `json:"words,omitempty"`
	// Weights are not negative.
	// +k8s:optional
	// +k8s:eachVal=+k8s:minimum=0
	Weights map[string]int32 `json:"weights,omitempty"`
	// Annotations have label keys.
	// +k8s:optional
	// +k8s:eachKey=+k8s:format=k8s-label-key
	Annotations map[string]string `json:"annotations,omitempty"`
	// Target has a required name and a bounded port.
	// +k8s:optional
	// +k8s:subfield(name)=+k8s:required
	// +k8s:subfield(port)=+k8s:maximum=100
	Target *Target `json:"target,omitempty"`
	// Class never changes.
	// +k8s:required
	// +k8s:immutable
	Class string `json:"class"`
	// Zone may be set and unset, not changed.
	// +k8s:optional
	// +k8s:update=NoModify
	Zone string `json:"zone,omitempty"`
	// Late may not be set on an update.
	// +k8s:optional
	// +k8s:update=NoSet
	Late string `json:"late,omitempty"`
	// Sticky may not be unset once set.
	// +k8s:optional
	// +k8s:update=NoUnset
	Sticky string `json:"sticky,omitempty"`
	// Frozen gets no new items.
	// +k8s:optional
	// +k8s:listType=set
	// +k8s:update=NoAddItem
	// +k8s:maxItems=16
	// +k8s:eachVal=+k8s:maxLength=63
	Frozen []string `json:"frozen,omitempty"`
	// Kept loses no items.
	// +k8s:optional
	// +k8s:listType=set
	// +k8s:update=NoRemoveItem
	// +k8s:maxItems=16
	// +k8s:eachVal=+k8s:maxLength=63
	Kept []string `json:"kept,omitempty"`
	// Revision never decreases.
	// +k8s:optional
	// +k8s:monotonic
	Revision int64 `json:"revision,omitempty"`
	// Legacy may not be set.
	// +k8s:forbidden
	Legacy string `json:"legacy,omitempty"`
	// TLS needs Cert.
	// +k8s:optional
	// +k8s:dependentRequired(cert)
	TLS bool `json:"tls,omitempty"`
	// Cert is a certificate.
	// +k8s:optional
	Cert string `json:"cert,omitempty"`
	// Source is a union.
	// +k8s:optional
	Source *Source `json:"source,omitempty"`
	// Backend is a discriminated union.
	// +k8s:optional
	Backend *Backend `json:"backend,omitempty"`
	// Hint is a zero-or-one union.
	// +k8s:optional
	Hint *Hint `json:"hint,omitempty"`
}

// Color is a color.
// +k8s:enum
type Color string

// The colors.
const (
	ColorBlue Color = "blue"
	ColorRed  Color = "red"
	// +k8s:enumExclude
	ColorGone Color = "gone"
)

// Item is an item of a map list.
type Item struct {
	// Name is the key.
	// +k8s:required
	Name string `json:"name"`
	// Value is the value.
	// +k8s:optional
	Value string `json:"value,omitempty"`
}

// Target is a named port.
type Target struct {
	// Name names it.
	// +k8s:optional
	Name string `json:"name,omitempty"`
	// Port numbers it.
	// +k8s:optional
	Port int32 `json:"port,omitempty"`
}

// Source is exactly one of a few.
type Source struct {
	// Git is one.
	// +k8s:optional
	// +k8s:unionMember
	Git string `json:"git,omitempty"`
	// Image is another.
	// +k8s:optional
	// +k8s:unionMember
	Image string `json:"image,omitempty"`
}

// Backend is set by its type.
type Backend struct {
	// Type says which member is set.
	// +k8s:required
	// +k8s:unionDiscriminator
	Type string `json:"type"`
	// Service is set when Type is Service.
	// +k8s:optional
	// +k8s:unionMember
	Service string `json:"service,omitempty"`
	// Resource is set when Type is Res.
	// +k8s:optional
	// +k8s:unionMember(memberName: "Res")
	Resource string `json:"resource,omitempty"`
}

// Hint is at most one of a few.
type Hint struct {
	// Fast is one.
	// +k8s:optional
	// +k8s:zeroOrOneOfMember
	Fast bool `json:"fast,omitempty"`
	// Small is another.
	// +k8s:optional
	// +k8s:zeroOrOneOfMember
	Small bool `json:"small,omitempty"`
}
