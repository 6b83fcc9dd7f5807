// Package v1 has +k8s: tags a CRD cannot read, and tags that say
// otherwise than a kubebuilder marker: each is a warning.
// +groupName=warn.opgen.dev
package v1
