package runtime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
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

// pause honours PauseAnnotation for one controller.
type pause[T apis.Object] struct {
	gvk      schema.GroupVersionKind
	recorder events.EventRecorder
	env      plug.Env[T] // writes the Paused condition
	queue    *lanes.Keys
}

// hold records that a.Object is paused instead of acting on it: the
// Paused event once, the Paused condition when the kind has conditions
// (written only when it changes), and nothing else. The key waits for the
// next change, which an unpause is.
func (p *pause[T]) hold(ctx context.Context, key cache.ObjectName, a *plug.Action[T], st *objectState) {
	p.setGVK(a)
	if _, done := st.memory.Get(pausedKey); !done {
		p.recorder.Eventf(a.Object, nil, corev1.EventTypeNormal, ReasonPaused, "Pause",
			"reconciliation paused by the %s annotation; remove it to resume", PauseAnnotation)
		st.memory.Set(pausedKey, true)
	}
	a.SetMemory(&st.memory)
	if co, ok := any(a.Object).(apis.ConditionsObject); ok {
		apis.MarkPaused(co, ReasonPaused, "reconciliation is paused by the "+PauseAnnotation+" annotation")
		if err := plug.WriteStatus(ctx, p.env, a); err != nil {
			a.Log.Error(err, "could not write the Paused condition; retrying")
			p.queue.Retry(key)
			return
		}
	}
	p.queue.Forget(key)
}

// resume runs before the first action after a pause: a Resumed event,
// and Paused=False on a.Object for the pipeline's status write.
func (p *pause[T]) resume(a *plug.Action[T]) {
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
	p.setGVK(a)
	p.recorder.Eventf(a.Object, nil, corev1.EventTypeNormal, ReasonResumed, "Resume",
		"reconciliation resumed: the %s annotation is gone", PauseAnnotation)
}

func (p *pause[T]) setGVK(a *plug.Action[T]) {
	if a.Object.GetObjectKind().GroupVersionKind().Kind == "" {
		a.Object.GetObjectKind().SetGroupVersionKind(p.gvk)
	}
}
