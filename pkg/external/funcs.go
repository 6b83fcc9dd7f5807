package external

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Funcs adapts functions to a Reconciler, for tests and small
// reconcilers. Configure, Read and Create are required; a nil Diff
// reports no changes (so Update never runs), and a nil Update or Delete
// fails the phase that needs it, saying which field to set.
type Funcs[T apis.Object, C, S any] struct {
	ConfigureFunc func(ctx context.Context, obj T) (C, error)
	ReadFunc      func(ctx context.Context, c C, obj T) (S, bool, error)
	DiffFunc      func(obj T, actual S) Diff
	CreateFunc    func(ctx context.Context, c C, obj T) (Result, error)
	UpdateFunc    func(ctx context.Context, c C, obj T, actual S) (Result, error)
	DeleteFunc    func(ctx context.Context, c C, obj T, actual S) (Result, error)
}

var _ Reconciler[*metav1.PartialObjectMetadata, any, any] = Funcs[*metav1.PartialObjectMetadata, any, any]{}

// Configure calls ConfigureFunc.
func (f Funcs[T, C, S]) Configure(ctx context.Context, obj T) (C, error) {
	if f.ConfigureFunc == nil {
		var zero C
		return zero, errors.New("external.Funcs: ConfigureFunc is nil")
	}
	return f.ConfigureFunc(ctx, obj)
}

// Read calls ReadFunc.
func (f Funcs[T, C, S]) Read(ctx context.Context, c C, obj T) (S, bool, error) {
	if f.ReadFunc == nil {
		var zero S
		return zero, false, errors.New("external.Funcs: ReadFunc is nil")
	}
	return f.ReadFunc(ctx, c, obj)
}

// Diff calls DiffFunc, or reports no changes.
func (f Funcs[T, C, S]) Diff(obj T, actual S) Diff {
	if f.DiffFunc == nil {
		return Diff{}
	}
	return f.DiffFunc(obj, actual)
}

// Create calls CreateFunc.
func (f Funcs[T, C, S]) Create(ctx context.Context, c C, obj T) (Result, error) {
	if f.CreateFunc == nil {
		return Done(), errors.New("external.Funcs: CreateFunc is nil")
	}
	return f.CreateFunc(ctx, c, obj)
}

// Update calls UpdateFunc.
func (f Funcs[T, C, S]) Update(ctx context.Context, c C, obj T, actual S) (Result, error) {
	if f.UpdateFunc == nil {
		return Done(), errors.New("external.Funcs: UpdateFunc is nil, but DiffFunc reported changes")
	}
	return f.UpdateFunc(ctx, c, obj, actual)
}

// Delete calls DeleteFunc.
func (f Funcs[T, C, S]) Delete(ctx context.Context, c C, obj T, actual S) (Result, error) {
	if f.DeleteFunc == nil {
		return Done(), errors.New("external.Funcs: DeleteFunc is nil; set it, or the external resource outlives the object")
	}
	return f.DeleteFunc(ctx, c, obj, actual)
}
