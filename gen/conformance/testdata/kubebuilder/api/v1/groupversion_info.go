// Package v1 holds the v1 API of the garden group, laid out as kubebuilder
// scaffolds it.
// +kubebuilder:object:generate=true
// +groupName=garden.example.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these kinds.
	GroupVersion = schema.GroupVersion{Group: "garden.example.com", Version: "v1"}

	// SchemeBuilder adds the kinds to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
