package external

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// Reconciler reconciles objects of type T with resources outside the
// cluster, reached through a client of type C, whose actual state is S.
type Reconciler[T apis.Object, C, S any] interface {
	// Configure returns a client of the external system for obj.
	Configure(ctx context.Context, obj T) (C, error)
	// Read returns the actual state of obj's external resource; found is
	// false when it does not exist.
	Read(ctx context.Context, c C, obj T) (actual S, found bool, err error)
	// Diff lists, in words for an event, how actual differs from what obj
	// asks for; none means in sync.
	Diff(obj T, actual S) []string
	// Create creates obj's external resource.
	Create(ctx context.Context, c C, obj T) error
	// Update makes the external resource what obj asks for.
	Update(ctx context.Context, c C, obj T, actual S) error
	// Delete deletes the external resource.
	Delete(ctx context.Context, c C, obj T, actual S) error
}

// Phase names a phase, in errors and in OnError.
type Phase string

// The phases that can fail.
const (
	PhaseConfigure Phase = "Configure"
	PhaseRead      Phase = "Read"
	PhaseCreate    Phase = "Create"
	PhaseUpdate    Phase = "Update"
	PhaseDelete    Phase = "Delete"
)

// Outcome is what a successful action did.
type Outcome string

// Outcomes, also the reasons of the Ready condition and of the events.
const (
	Created Outcome = "Created"
	Updated Outcome = "Updated"
	InSync  Outcome = "InSync"
	Deleted Outcome = "Deleted"
	// Gone: the object was deleted and its external resource did not
	// exist (any more).
	Gone Outcome = "Gone"
)

// Result describes a successful action.
type Result struct {
	Outcome Outcome
	// Changes is what Diff returned, for Updated.
	Changes []string
}

// ErrorHandler is implemented by Reconcilers that handle failures
// themselves. OnError gets the phase that failed and its error, may set
// conditions and events on a, and returns what the action returns: the
// error (retried with backoff), plug.Terminal(err) (not retried), or nil
// (the action succeeds; use a.RequeueAfter to try again later).
type ErrorHandler[T apis.Object] interface {
	OnError(ctx context.Context, a *plug.Action[T], phase Phase, err error) error
}

// SuccessHandler is implemented by Reconcilers that report success
// themselves, instead of the default Ready condition and events.
type SuccessHandler[T apis.Object] interface {
	OnSuccess(ctx context.Context, a *plug.Action[T], r Result)
}

// Handler runs a Reconciler as the runtime's handler for T: every verb
// syncs, Delete deletes.
type Handler[T apis.Object, C, S any] struct {
	r Reconciler[T, C, S]
}

var (
	_ plug.Handler[*metav1.PartialObjectMetadata] = (*Handler[*metav1.PartialObjectMetadata, any, any])(nil)
	_ plug.Deleter[*metav1.PartialObjectMetadata] = (*Handler[*metav1.PartialObjectMetadata, any, any])(nil)
)

// New returns the handler that runs r; register it with runtime.Register
// for T's Kind.
func New[T apis.Object, C, S any](r Reconciler[T, C, S]) *Handler[T, C, S] {
	return &Handler[T, C, S]{r: r}
}

// Add syncs.
func (h *Handler[T, C, S]) Add(ctx context.Context, a *plug.Action[T]) error { return h.sync(ctx, a) }

// Modify syncs.
func (h *Handler[T, C, S]) Modify(ctx context.Context, a *plug.Action[T]) error {
	return h.sync(ctx, a)
}

// Reconcile syncs: it reads again and repairs drift.
func (h *Handler[T, C, S]) Reconcile(ctx context.Context, a *plug.Action[T]) error {
	return h.sync(ctx, a)
}

// Delete deletes the external resource if it exists.
func (h *Handler[T, C, S]) Delete(ctx context.Context, a *plug.Action[T]) error {
	c, actual, found, phase, err := h.read(ctx, a.Object)
	if err != nil {
		return h.failed(ctx, a, phase, err)
	}
	if !found {
		return h.succeeded(ctx, a, Result{Outcome: Gone})
	}
	if err := h.r.Delete(ctx, c, a.Object, actual); err != nil {
		return h.failed(ctx, a, PhaseDelete, err)
	}
	return h.succeeded(ctx, a, Result{Outcome: Deleted})
}

func (h *Handler[T, C, S]) sync(ctx context.Context, a *plug.Action[T]) error {
	c, actual, found, phase, err := h.read(ctx, a.Object)
	if err != nil {
		return h.failed(ctx, a, phase, err)
	}
	if !found {
		if err := h.r.Create(ctx, c, a.Object); err != nil {
			return h.failed(ctx, a, PhaseCreate, err)
		}
		return h.succeeded(ctx, a, Result{Outcome: Created})
	}
	changes := h.r.Diff(a.Object, actual)
	if len(changes) == 0 {
		return h.succeeded(ctx, a, Result{Outcome: InSync})
	}
	if err := h.r.Update(ctx, c, a.Object, actual); err != nil {
		return h.failed(ctx, a, PhaseUpdate, err)
	}
	return h.succeeded(ctx, a, Result{Outcome: Updated, Changes: changes})
}

// read runs Configure and Read.
func (h *Handler[T, C, S]) read(ctx context.Context, obj T) (c C, actual S, found bool, phase Phase, err error) {
	if c, err = h.r.Configure(ctx, obj); err != nil {
		return c, actual, false, PhaseConfigure, err
	}
	actual, found, err = h.r.Read(ctx, c, obj)
	return c, actual, found, PhaseRead, err
}

func (h *Handler[T, C, S]) failed(ctx context.Context, a *plug.Action[T], phase Phase, err error) error {
	if eh, ok := h.r.(ErrorHandler[T]); ok {
		return eh.OnError(ctx, a, phase, err)
	}
	return fmt.Errorf("external %s: %w", phase, err)
}

func (h *Handler[T, C, S]) succeeded(ctx context.Context, a *plug.Action[T], r Result) error {
	if sh, ok := h.r.(SuccessHandler[T]); ok {
		sh.OnSuccess(ctx, a, r)
		return nil
	}
	DefaultOnSuccess(a, r)
	return nil
}

// DefaultOnSuccess is what a successful action reports unless the
// Reconciler implements SuccessHandler: Ready=True with the outcome as
// reason (objects with conditions; not on deletion), and a Normal event
// for a Create, an Update (listing the changes) or a Delete.
func DefaultOnSuccess[T apis.Object](a *plug.Action[T], r Result) {
	if co, ok := any(a.Object).(apis.ConditionsObject); ok && r.Outcome != Deleted && r.Outcome != Gone {
		apis.MarkReady(co, string(r.Outcome), message(r))
	}
	if r.Outcome != InSync && r.Outcome != Gone {
		a.AddEvent(plug.Event{Type: corev1.EventTypeNormal, Reason: string(r.Outcome), Note: message(r)})
	}
}

func message(r Result) string {
	switch r.Outcome {
	case Created:
		return "created the external resource"
	case Updated:
		return "updated the external resource: " + strings.Join(r.Changes, "; ")
	case Deleted:
		return "deleted the external resource"
	case Gone:
		return "the external resource does not exist"
	}
	return "the external resource is in sync"
}
