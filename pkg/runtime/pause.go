package runtime

import (
	"context"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// PauseAnnotation suspends reconciliation of the object that carries it
// with the value "true": no handler runs, Delete included (the finalizer
// holds a deleted object until the annotation goes). Every controller
// honours it. Removing it (or any other value) resumes with the verb the
// object's state calls for.
//
//	kubectl annotate greeting hello opgen.dev/paused=true
//	kubectl annotate greeting hello opgen.dev/paused-
const PauseAnnotation = "opgen.dev/paused"

// Event and condition reasons of pausing.
const (
	// ReasonPaused: a Normal event, once per pause, and the reason of the
	// Paused=True condition.
	ReasonPaused = "Paused"
	// ReasonResumed: a Normal event when the annotation went, and the
	// reason of the Paused=False condition.
	ReasonResumed = "Resumed"
)

// IsPaused reports whether obj carries PauseAnnotation=true.
func IsPaused(obj metav1.Object) bool { return obj.GetAnnotations()[PauseAnnotation] == "true" }

// pausedKey marks, in the object's step memory, that the Paused event was
// emitted.
const pausedKey = "runtime.paused"

// pausing honours PauseAnnotation.
type pausing[T apis.Object] struct{ c *Controller[T] }

// pause records that obj is paused instead of acting on it: the Paused
// event once, the Paused condition when the kind has conditions (written
// only when it changes), and nothing else. The key waits for the next
// change, which an unpause is.
func (s pausing[T]) pause(ctx context.Context, key cache.ObjectName, obj T, st *objectState, log logr.Logger, r telemetry.Reconcile) {
	c := s.c
	c.op.bus.Emit(telemetry.ReconcilePaused{Reconcile: r})
	a := c.newAction(plug.Verb(r.Verb), obj, log)
	s.setGVK(a)
	if _, done := st.memory.Get(pausedKey); !done {
		c.op.recorder.Eventf(a.Object, nil, corev1.EventTypeNormal, ReasonPaused, "Pause",
			"reconciliation paused by the %s annotation; remove it to resume", PauseAnnotation)
		st.memory.Set(pausedKey, true)
	}
	a.SetMemory(&st.memory)
	if co, ok := any(a.Object).(apis.ConditionsObject); ok {
		apis.MarkPaused(co, ReasonPaused, "reconciliation is paused by the "+PauseAnnotation+" annotation")
		if err := plug.WriteStatus(ctx, c.env, a); err != nil {
			log.Error(err, "could not write the Paused condition; retrying")
			c.queue.AddRateLimited(key)
			return
		}
	}
	c.queue.Forget(key)
}

// resume runs before the first action after a pause: a Resumed event,
// and Paused=False on a.Object for the pipeline's status write.
func (s pausing[T]) resume(a *plug.Action[T]) {
	c := s.c
	_, wasPaused := a.Memory().Get(pausedKey)
	co, hasConditions := any(a.Object).(apis.ConditionsObject)
	if hasConditions && apis.IsTrue(co, apis.Paused) {
		wasPaused = true
		apis.MarkUnpaused(co, ReasonResumed, "")
	}
	if !wasPaused {
		return
	}
	a.Memory().Delete(pausedKey)
	s.setGVK(a)
	c.op.recorder.Eventf(a.Object, nil, corev1.EventTypeNormal, ReasonResumed, "Resume",
		"reconciliation resumed: the %s annotation is gone", PauseAnnotation)
}

func (s pausing[T]) setGVK(a *plug.Action[T]) {
	c := s.c
	if a.Object.GetObjectKind().GroupVersionKind().Kind == "" {
		a.Object.GetObjectKind().SetGroupVersionKind(c.kind.GVK)
	}
}
