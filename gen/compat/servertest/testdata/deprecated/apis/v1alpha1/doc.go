// Package v1alpha1 is version v1alpha1 of a kind whose older version is deprecated.
//
// +groupName=deprecation.opgen.dev
package v1alpha1
