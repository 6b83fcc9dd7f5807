package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// NodeWatcher watches Nodes through functions. Its methods come from a type
// of another package, which opgen does not load: it may have Delete, so
// the role grants the finalizer's patch.
//
// +opgen:controller:for=v1.Node
// +opgen:controller:workers=1
type NodeWatcher struct {
	plug.HandlerFuncs[*corev1.Node]
}
