//go:build tools

// Package controlplane only records, for `go mod tidy`, the main packages that
// hack/controlplane builds. See README.md.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
