// Package v1 is the example group's first version.
//
// +k8s:deepcopy-gen=package
// +groupName=example.codegen.opgen.dev
package v1
