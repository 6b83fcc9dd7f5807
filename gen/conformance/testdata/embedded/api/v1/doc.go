// Package v1 holds a kind that embeds a pod template; doc.go gives the
// group, where code-generator reads it.
// +kubebuilder:object:generate=true
// +groupName=batch.example.com
package v1
