// +groupName=garden.example.com

// Package v1 is read by code-generator as well: its generators take the
// group from doc.go, where kubebuilder's groupversion_info.go is not read.
package v1
