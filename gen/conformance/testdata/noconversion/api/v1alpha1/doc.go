// Package v1alpha1 is the v1alpha1 version of the library API.
// +groupName=library.example.com
package v1alpha1
