// Package v1 registers its kinds itself, as kubebuilder projects do.
//
// +kubebuilder:object:generate=true
// +groupName=legacy.example.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group version of the package.
	GroupVersion = schema.GroupVersion{Group: "legacy.example.com", Version: "v1"}
	// SchemeBuilder registers the kinds.
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &Thing{}, &ThingList{})
		return nil
	})
	// AddToScheme adds the kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
