// Package v1 is an API with every +k8s: tag opgen reads
// (gen/k8stags.Table); ../../../../markers holds the same API written with
// the equivalent kubebuilder markers, which must give the same CRD.
// +groupName=tags.opgen.dev
package v1
