// Package v1 is another group whose first DNS label is example.
//
// +k8s:deepcopy-gen=package
// +groupName=example.test.codegen.opgen.dev
// +groupGoName=SecondExample
package v1
