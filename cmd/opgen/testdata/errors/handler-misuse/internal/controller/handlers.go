// Package controller has handler types with mistakes.
package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// Incomplete has Add only.
//
// +opgen:controller:for=v1.Pod
type Incomplete struct{}

func (*Incomplete) Add(context.Context, *plug.Action[*corev1.Pod]) error { return nil }

// NoKind owns ConfigMaps but handles no kind.
//
// +opgen:controller:owns=v1.ConfigMap
type NoKind struct{}

// TwoKinds handles Pods, and then Services too.
//
// +opgen:controller:for=v1.Pod
// +opgen:controller:for=v1.Service
type TwoKinds struct{ podBase }

// Unquoted has a selector with a comma.
//
// +opgen:controller:for=v1.Pod
// +opgen:controller:labelSelector=app=web,tier=db
type Unquoted struct{ podBase }

// Generic has a type parameter.
//
// +opgen:controller:for=v1.Pod
type Generic[T any] struct{ podBase }

// +opgen:controller:for=v1.Pod
var notAType = 1

type podBase struct{}

func (*podBase) Add(context.Context, *plug.Action[*corev1.Pod]) error       { return nil }
func (*podBase) Modify(context.Context, *plug.Action[*corev1.Pod]) error    { return nil }
func (*podBase) Reconcile(context.Context, *plug.Action[*corev1.Pod]) error { return nil }
