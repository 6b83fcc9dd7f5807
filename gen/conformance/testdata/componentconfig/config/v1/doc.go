// Package v1 is the operator's configuration file, a component config:
// its root object has no ObjectMeta, so it makes no CRD.
// +groupName=config.widgets.example.com
// +k8s:defaulter-gen=TypeMeta
package v1
