// Package v1 is a hyphenated group.
//
// +k8s:deepcopy-gen=package
// +groupName=example-group.hyphens.codegen.opgen.dev
// +groupGoName=ExampleGroup
package v1
