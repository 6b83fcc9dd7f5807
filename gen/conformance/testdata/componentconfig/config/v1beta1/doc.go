// Package v1beta1 is the operator's configuration file, a component config:
// its root object has no ObjectMeta, so it makes no CRD.
// +groupName=config.widgets.example.com
// +k8s:conversion-gen=example.com/conformance/componentconfig/config/v1
package v1beta1
