// +k8s:deepcopy-gen=package
// +groupName=shop.example.com

// Package v1 is the v1 version of the shop API, laid out for
// code-generator.
package v1
