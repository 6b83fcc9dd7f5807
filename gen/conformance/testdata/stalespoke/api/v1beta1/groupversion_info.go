package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group version of the package's kinds.
	GroupVersion = schema.GroupVersion{Group: "boards.example.com", Version: "v1beta1"}
	// SchemeBuilder adds the kinds to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme

	// localSchemeBuilder is what conversion-gen's RegisterConversions
	// registers with.
	localSchemeBuilder = &SchemeBuilder.SchemeBuilder
)
