package plug

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/apis"
)

// Reasons ApplyStatus puts on the Degraded condition.
const (
	ReasonReconcileFailed = "ReconcileFailed"
	ReasonReconciled      = "Reconciled"
)

// ApplyStatus writes a.Object's status to the status subresource, only
// when it differs from the cached object's: a server-side apply, or the
// merge patch of the changed fields that has the same effect.
//
// # Flow
//
// After the rest of the pipeline:
//
//  1. If it succeeded and the verb is Add, Modify or Reconcile, it sets
//     status.observedGeneration to metadata.generation (objects that
//     implement apis.ObservedGenerationObject).
//  2. If it failed and the object implements apis.ConditionsObject, it
//     sets Degraded=True (reason ReconcileFailed, the error as message),
//     unless the handler set Degraded=True with a reason of its own;
//     if it succeeded and Degraded=True carries that reason, it sets
//     Degraded=False (reason Reconciled). Other conditions are the
//     handler's.
//  3. It compares the JSON of the status with the cached object's status
//     and, when they differ, applies {apiVersion, kind, metadata: {name,
//     namespace, uid}, status} to the status subresource with
//     env.FieldManager and force. When the change only sets values (it
//     removes no field and changes no list), it sends the JSON merge patch
//     of the changed fields instead, with env.FieldManager: the object
//     ends the same, and the API server does less work (a steady
//     operator's counters, timestamps and observed generations go so).
//
// # Guarantees
//
// No write when nothing changed: a steady state makes no status writes.
// The write of one action is not repeated by the next action on the object
// when the cache has not caught up with it yet (the step remembers the
// status it wrote and the resourceVersion it judged against; any newer
// version in the cache, a foreign edit included, is judged afresh). Status changes made
// by a failing handler (a Degraded condition, a phase) are written; the
// observed generation is not advanced then, so the next try has the same
// verb. The error of the pipeline is returned unchanged; a failed write is
// returned when the pipeline succeeded. Neither write creates the object
// (the apply carries its UID): a write to an object deleted since it was
// read is dropped.
//
// # Caveats
//
// The operator owns the whole status it computes. A field the handler
// leaves at its zero value (false, 0, "", an empty list) while the cached
// status has a value is applied with that zero value, so another writer's
// value is overridden: a foreign status edit is reverted at the next
// action. A pointer left nil while the cached status has a value is
// removed (by the merge patch; an apply removes it only if its manager
// set it, and the next write removes it otherwise); a time left zero
// means unset and is left out. Halted actions and kinds without a Status field write
// nothing. A status-only change by another writer does not wake the
// controller: the next action reverts it.
func ApplyStatus[T apis.Object](env Env[T]) Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		err := next(ctx)
		if a.Halted() || (err != nil && OutcomeUnknown(err)) {
			// An action stopped with the operator (it no longer leads, or
			// shuts down) has nothing to say of the object: the replica
			// that leads next handles it.
			return err
		}
		markStatus(a, err)
		if werr := writeStatus(ctx, env, a); werr != nil && err == nil {
			return werr
		}
		return err
	})
}

func markStatus[T apis.Object](a *Action[T], err error) {
	if og, ok := any(a.Object).(apis.ObservedGenerationObject); ok && err == nil && a.Verb != Delete {
		og.SetObservedGeneration(og.GetGeneration())
	}
	co, ok := any(a.Object).(apis.ConditionsObject)
	if !ok {
		return
	}
	if err != nil {
		if handlerSaidWhy(co, any(a.Observed())) {
			return // the handler's own reason for Degraded stands
		}
		apis.MarkDegraded(co, ReasonReconcileFailed, err.Error())
		return
	}
	for _, c := range co.GetConditions() {
		if c.Type == apis.Degraded && c.Status == metav1.ConditionTrue && c.Reason == ReasonReconcileFailed {
			conds := co.GetConditions()
			apis.SetCondition(&conds, co.GetGeneration(), apis.Degraded, metav1.ConditionFalse, ReasonReconciled, "")
			co.SetConditions(conds)
		}
	}
}

// handlerSaidWhy reports whether the handler set the object's Degraded
// condition True in this action (it differs from the observed object's),
// with a reason of its own rather than ReconcileFailed.
func handlerSaidWhy(co apis.ConditionsObject, observed any) bool {
	now := degraded(co)
	if now == nil || now.Status != metav1.ConditionTrue || now.Reason == ReasonReconcileFailed {
		return false
	}
	before := (*metav1.Condition)(nil)
	if o, ok := observed.(apis.ConditionsObject); ok {
		before = degraded(o)
	}
	return before == nil || before.Reason != now.Reason || before.Message != now.Message || before.Status != now.Status
}

func degraded(co apis.ConditionsObject) *metav1.Condition {
	for _, c := range co.GetConditions() {
		if c.Type == apis.Degraded {
			return &c
		}
	}
	return nil
}

// statusMemo is what ApplyStatus remembers of its last write to an object.
type statusMemo struct {
	written []byte // the status applied
	// seen is the resourceVersion of the cached object the write was
	// judged against. While the cache still shows that version, it has not
	// caught up with the write; any later version holds the write, so the
	// cache alone is the judge again.
	seen string
}

const statusMemoKey = "plug.ApplyStatus"

// WriteStatus writes a.Object's status as ApplyStatus does (to the status
// subresource, only when it differs from the cached status and from the
// last write), without touching observedGeneration or
// the Degraded condition. It is for code that records a state outside the
// pipeline, such as the runtime's pause handling.
func WriteStatus[T apis.Object](ctx context.Context, env Env[T], a *Action[T]) error {
	return writeStatus(ctx, env, a)
}

func writeStatus[T apis.Object](ctx context.Context, env Env[T], a *Action[T]) error {
	if statusEqual(a.Object, a.Observed()) {
		// The common case, a handler that leaves the status as it found
		// it: equal values marshal to equal JSON, so the comparison below
		// would find nothing to write, at the cost of two encodings.
		a.Memory().Delete(statusMemoKey)
		return nil
	}
	desired, ok, err := statusJSON(a.Object)
	if err != nil || !ok {
		return err
	}
	cached, _, err := statusJSON(a.Observed())
	if err != nil {
		return err
	}
	seen := a.Observed().GetResourceVersion()
	if !statusChanged(a.Memory(), desired, cached, seen) {
		return nil
	}
	body, merge, err := statusWrite(desired, cached, statusType(a.Object))
	if err != nil {
		return err
	}
	start := time.Now()
	err = patchStatus(ctx, env, a.Object, body, merge)
	logApply(ctx, env.GVK.Kind+"/status", a.Object.GetNamespace(), a.Object.GetName(), applyResult(err, ApplyCreatedOrChanged), start)
	if err != nil {
		a.Memory().Delete(statusMemoKey)
		if gone(err) {
			// Deleted or replaced since it was read: there is nothing to
			// write to, and the cache will show it.
			a.Log.V(1).Info("status not written: the object was deleted meanwhile", "object", key(a.Object), "error", err.Error())
			return nil
		}
		return fmt.Errorf("apply status of %s: %w%s", key(a.Object), err, hint(err, "status"))
	}
	a.Memory().Set(statusMemoKey, statusMemo{written: desired, seen: seen})
	return nil
}

// patchStatus writes what statusWrite returned: the merge patch body, or
// else a server-side apply with force of the status body. Neither creates
// the object: a patch of a deleted one is NotFound, and the apply carries
// its UID.
func patchStatus[T apis.Object](ctx context.Context, env Env[T], obj T, status []byte, merge bool) error {
	client := env.Client(obj.GetNamespace())
	if merge {
		_, err := client.Patch(ctx, obj.GetName(), types.MergePatchType, status,
			metav1.PatchOptions{FieldManager: env.FieldManager}, "status")
		return err
	}
	body, err := json.Marshal(statusApply{
		APIVersion: env.GVK.GroupVersion().String(),
		Kind:       env.GVK.Kind,
		Metadata:   nameOnly{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID()},
		Status:     status,
	})
	if err != nil {
		return err
	}
	force := true
	_, err = client.Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: env.FieldManager, Force: &force}, "status")
	return err
}

// statusChanged reports whether desired must be written, given the cached
// status, the resourceVersion of the cached object and the memory of the
// last write. The memory counts only while the cache shows the very object
// the last write was judged against: a foreign edit that puts back the
// status that write replaced has a version of its own, and is reverted.
func statusChanged(mem *Memory, desired, cached []byte, seen string) bool {
	if bytes.Equal(desired, cached) {
		mem.Delete(statusMemoKey) // the cache has caught up, or never needed to
		return false
	}
	v, _ := mem.Get(statusMemoKey)
	m, ok := v.(statusMemo)
	if ok && seen == m.seen && bytes.Equal(desired, m.written) {
		return false // the cache has not caught up with our last write yet
	}
	mem.Delete(statusMemoKey)
	return true
}

type statusApply struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   nameOnly        `json:"metadata"`
	Status     json.RawMessage `json:"status"`
}

type nameOnly struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace,omitempty"`
	UID       types.UID `json:"uid,omitempty"`
}

// statusJSON returns the JSON of obj's status field, found by its json tag
// "status" on the struct obj points to. ok is false when there is none.
func statusJSON(obj any) (data []byte, ok bool, err error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false, nil
	}
	idx, ok := statusField(v.Elem().Type())
	if !ok {
		return nil, false, nil
	}
	data, err = json.Marshal(v.Elem().Field(idx).Interface())
	return data, true, err
}

// statusEqual reports whether a and b, pointers to structs of one type,
// have deeply equal status fields. False says nothing: statusJSON decides.
func statusEqual(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Pointer || va.IsNil() || vb.Kind() != reflect.Pointer || vb.IsNil() ||
		va.Type() != vb.Type() || va.Elem().Kind() != reflect.Struct {
		return false
	}
	idx, ok := statusField(va.Elem().Type())
	return ok && reflect.DeepEqual(va.Elem().Field(idx).Addr().Interface(), vb.Elem().Field(idx).Addr().Interface())
}

// statusType is the Go type of obj's status field.
func statusType(obj any) reflect.Type {
	t := reflect.TypeOf(obj).Elem()
	idx, _ := statusField(t)
	return t.Field(idx).Type
}

var statusFields sync.Map // reflect.Type → int (-1 for none)

func statusField(t reflect.Type) (int, bool) {
	if i, ok := statusFields.Load(t); ok {
		return i.(int), i.(int) >= 0
	}
	idx := -1
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "status" {
			idx = i
			break
		}
	}
	statusFields.Store(t, idx)
	return idx, idx >= 0
}
