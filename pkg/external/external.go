package external

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// Reconciler reconciles objects of type T with resources outside the
// cluster. C is the data the phases share: Configure makes it (at least a
// client of the external system) and every later phase gets it; make it a
// pointer to a struct to let one phase leave something for the next (Read
// an ID that Update needs). S is the resource's actual state, as Read
// returns it to Diff, Update and Delete.
type Reconciler[T apis.Object, C, S any] interface {
	// Configure returns the phases' shared data for obj: a client of the
	// external system, credentials, anything later phases need.
	Configure(ctx context.Context, obj T) (C, error)
	// Read returns the actual state of obj's external resource; found is
	// false when it does not exist (Create runs then, without Diff).
	Read(ctx context.Context, c C, obj T) (actual S, found bool, err error)
	// Diff says what must change for actual to be what obj asks for:
	// NeedUpdate runs Update, NeedCreate replaces the resource (Delete
	// then Create, for a field that cannot change in place), neither is
	// in sync.
	Diff(obj T, actual S) Diff
	// Create creates obj's external resource.
	Create(ctx context.Context, c C, obj T) (Result, error)
	// Update makes the external resource what obj asks for.
	Update(ctx context.Context, c C, obj T, actual S) (Result, error)
	// Delete deletes the external resource.
	Delete(ctx context.Context, c C, obj T, actual S) (Result, error)
}

// Diff is what Diff found: what to do, and in words for the event and the
// Ready condition, what differs.
type Diff struct {
	// NeedCreate: the resource must be made anew (Delete, then Create).
	NeedCreate bool
	// NeedUpdate: the resource must be updated in place.
	NeedUpdate bool
	// Changes lists the differences, such as `size 1 → 2`.
	Changes []string
}

// InSync reports whether d asks for nothing.
func (d Diff) InSync() bool { return !d.NeedCreate && !d.NeedUpdate }

// Result is what a phase asks for after it succeeds: Done (the zero
// Result), RequeueAfter(d) or RequeueNow(). controller-runtime's
// Result{RequeueAfter: d} and Result{Requeue: true}.
type Result struct {
	after time.Duration
}

// Done asks for nothing: the object comes back on a change or after the
// controller's period.
func Done() Result { return Result{} }

// RequeueAfter brings the object back after d even when nothing changes
// (to poll a resource the external system is still making).
func RequeueAfter(d time.Duration) Result { return Result{after: d} }

// RequeueNow brings the object back at once, without the failure backoff
// (controller-runtime's Result{Requeue: true}).
func RequeueNow() Result { return Result{after: time.Nanosecond} }

// apply asks a for the requeue r wants.
func (r Result) apply(a interface{ RequeueAfter(time.Duration) }) {
	if r.after > 0 {
		a.RequeueAfter(r.after)
	}
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

// Summary describes a successful action, for OnSuccess.
type Summary struct {
	Outcome Outcome
	// Changes is what Diff listed, for Updated (and Created when it
	// replaced the resource).
	Changes []string
}

// ErrorPhase is implemented by Reconcilers that handle failures
// themselves (operator-sdk-extra's OnError phase). OnError gets the phase that failed and its error, may set
// conditions and events on a, and returns what the action returns: the
// error (retried with backoff), plug.Terminal(err) (not retried), or nil
// (the action succeeds; use a.RequeueAfter to try again later).
type ErrorPhase[T apis.Object] interface {
	OnError(ctx context.Context, a *plug.Action[T], phase Phase, err error) error
}

// SuccessPhase is implemented by Reconcilers that report success
// themselves, instead of the default Ready condition and events
// (operator-sdk-extra's OnSuccess phase).
type SuccessPhase[T apis.Object] interface {
	OnSuccess(ctx context.Context, a *plug.Action[T], s Summary)
}

// Phased runs a Reconciler's phases as the runtime's plug.Handler for T:
// every verb syncs, Delete deletes.
type Phased[T apis.Object, C, S any] struct {
	r Reconciler[T, C, S]
}

var (
	_ plug.Handler[*metav1.PartialObjectMetadata] = (*Phased[*metav1.PartialObjectMetadata, any, any])(nil)
	_ plug.Deleter[*metav1.PartialObjectMetadata] = (*Phased[*metav1.PartialObjectMetadata, any, any])(nil)
)

// New returns the handler that runs r; register it with runtime.Register
// for T's Kind.
func New[T apis.Object, C, S any](r Reconciler[T, C, S]) *Phased[T, C, S] {
	return &Phased[T, C, S]{r: r}
}

// Add syncs.
func (h *Phased[T, C, S]) Add(ctx context.Context, a *plug.Action[T]) error { return h.sync(ctx, a) }

// Modify syncs.
func (h *Phased[T, C, S]) Modify(ctx context.Context, a *plug.Action[T]) error {
	return h.sync(ctx, a)
}

// Reconcile syncs: it reads again and repairs drift.
func (h *Phased[T, C, S]) Reconcile(ctx context.Context, a *plug.Action[T]) error {
	return h.sync(ctx, a)
}

// Delete deletes the external resource if it exists.
func (h *Phased[T, C, S]) Delete(ctx context.Context, a *plug.Action[T]) error {
	c, actual, found, phase, err := h.read(ctx, a.Object)
	if err != nil {
		return h.failed(ctx, a, phase, err)
	}
	if !found {
		return h.succeeded(ctx, a, Summary{Outcome: Gone}, Done())
	}
	res, err := h.r.Delete(ctx, c, a.Object, actual)
	if err != nil {
		return h.failed(ctx, a, PhaseDelete, err)
	}
	return h.succeeded(ctx, a, Summary{Outcome: Deleted}, res)
}

func (h *Phased[T, C, S]) sync(ctx context.Context, a *plug.Action[T]) error {
	c, actual, found, phase, err := h.read(ctx, a.Object)
	if err != nil {
		return h.failed(ctx, a, phase, err)
	}
	if !found {
		return h.create(ctx, a, c, nil)
	}
	d := h.r.Diff(a.Object, actual)
	switch {
	case d.NeedCreate:
		if _, err := h.r.Delete(ctx, c, a.Object, actual); err != nil {
			return h.failed(ctx, a, PhaseDelete, err)
		}
		return h.create(ctx, a, c, d.Changes)
	case d.NeedUpdate:
		res, err := h.r.Update(ctx, c, a.Object, actual)
		if err != nil {
			return h.failed(ctx, a, PhaseUpdate, err)
		}
		return h.succeeded(ctx, a, Summary{Outcome: Updated, Changes: d.Changes}, res)
	}
	return h.succeeded(ctx, a, Summary{Outcome: InSync}, Done())
}

func (h *Phased[T, C, S]) create(ctx context.Context, a *plug.Action[T], c C, changes []string) error {
	res, err := h.r.Create(ctx, c, a.Object)
	if err != nil {
		return h.failed(ctx, a, PhaseCreate, err)
	}
	return h.succeeded(ctx, a, Summary{Outcome: Created, Changes: changes}, res)
}

// read runs Configure and Read.
func (h *Phased[T, C, S]) read(ctx context.Context, obj T) (c C, actual S, found bool, phase Phase, err error) {
	if c, err = h.r.Configure(ctx, obj); err != nil {
		return c, actual, false, PhaseConfigure, err
	}
	actual, found, err = h.r.Read(ctx, c, obj)
	return c, actual, found, PhaseRead, err
}

func (h *Phased[T, C, S]) failed(ctx context.Context, a *plug.Action[T], phase Phase, err error) error {
	if eh, ok := h.r.(ErrorPhase[T]); ok {
		return eh.OnError(ctx, a, phase, err)
	}
	return fmt.Errorf("external %s: %w", phase, err)
}

func (h *Phased[T, C, S]) succeeded(ctx context.Context, a *plug.Action[T], s Summary, res Result) error {
	res.apply(a)
	if sh, ok := h.r.(SuccessPhase[T]); ok {
		sh.OnSuccess(ctx, a, s)
		return nil
	}
	DefaultOnSuccess(a, s)
	return nil
}

// DefaultOnSuccess is what a successful action reports unless the
// Reconciler implements SuccessPhase: Ready=True with the outcome as
// reason (objects with conditions; not on deletion), and a Normal event
// for a Create, an Update (listing the changes) or a Delete.
func DefaultOnSuccess[T apis.Object](a *plug.Action[T], r Summary) {
	if co, ok := any(a.Object).(apis.ConditionsObject); ok && r.Outcome != Deleted && r.Outcome != Gone {
		apis.MarkReady(co, string(r.Outcome), message(r))
	}
	if r.Outcome != InSync && r.Outcome != Gone {
		a.AddEvent(plug.Event{Type: corev1.EventTypeNormal, Reason: string(r.Outcome), Note: message(r)})
	}
}

func message(r Summary) string {
	switch r.Outcome {
	case Created:
		if len(r.Changes) > 0 {
			return "replaced the external resource: " + strings.Join(r.Changes, "; ")
		}
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
