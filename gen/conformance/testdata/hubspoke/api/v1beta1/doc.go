// +groupName=kitchen.example.com

// Package v1beta1 is read by code-generator as well: its generators take the
// group from doc.go.
package v1beta1
