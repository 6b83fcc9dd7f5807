// +k8s:deepcopy-gen=package
// +groupName=shop.example.com
// +k8s:conversion-gen=example.com/conformance/codegenerator/apis/shop/v1

// Package v1beta1 is the v1beta1 version of the shop API, laid out for
// code-generator.
package v1beta1
