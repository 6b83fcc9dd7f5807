// Package v1 is the served and stored version of the grants API, in
// Gateway API's style: register-gen's registration, no
// groupversion_info.go, and a type named Kind of its own.
// +kubebuilder:object:generate=true
// +groupName=grants.example.com
package v1
