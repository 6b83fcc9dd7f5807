package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeGroupVersion is the group version of the package.
var SchemeGroupVersion = schema.GroupVersion{Group: "visibility.example.com", Version: "v1alpha1"}

var (
	// SchemeBuilder adds nothing yet: the version has no type.
	SchemeBuilder runtime.SchemeBuilder
	// AddToScheme adds the package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
