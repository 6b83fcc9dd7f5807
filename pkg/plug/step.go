package plug

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Step is one stage of a pipeline. Run does its work before and after
// calling next, which runs the rest of the pipeline (the steps after it and,
// innermost, the handler), and returns next's error or its own. A step that
// does not call next ends the pipeline there.
type Step[T apis.Object] interface {
	Run(ctx context.Context, a *Action[T], next Next) error
}

// Next runs the rest of a pipeline.
type Next func(ctx context.Context) error

// StepFunc adapts a function to a Step.
type StepFunc[T apis.Object] func(ctx context.Context, a *Action[T], next Next) error

// Run calls f.
func (f StepFunc[T]) Run(ctx context.Context, a *Action[T], next Next) error { return f(ctx, a, next) }

var _ Step[*metav1.PartialObjectMetadata] = StepFunc[*metav1.PartialObjectMetadata](nil)

// Pipeline is an ordered list of steps. The first step runs first and
// finishes last; each wraps all the steps after it.
type Pipeline[T apis.Object] []Step[T]

// Run runs the pipeline on a. After a step calls a.Halt, the steps after it
// are skipped.
func (p Pipeline[T]) Run(ctx context.Context, a *Action[T]) error {
	return p.from(0, a)(ctx)
}

func (p Pipeline[T]) from(i int, a *Action[T]) Next {
	return func(ctx context.Context) error {
		if i == len(p) || a.Halted() {
			return nil
		}
		return p[i].Run(ctx, a, p.from(i+1, a))
	}
}

// terminalError marks an error that retrying cannot fix.
type terminalError struct{ err error }

func (e terminalError) Error() string { return "terminal: " + e.err.Error() }
func (e terminalError) Unwrap() error { return e.err }

// Terminal wraps err so that the runtime records it (status, event, metric)
// but does not retry; the next change to the object starts over.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return terminalError{err}
}

// IsTerminal reports whether err, or an error it wraps, came from Terminal.
func IsTerminal(err error) bool {
	var t terminalError
	return errors.As(err, &t)
}

// Named gives a step a name, which traces and logs show (see StepName).
// Default names each of its steps after the function that made it.
func Named[T apis.Object](name string, s Step[T]) Step[T] { return namedStep[T]{name: name, step: s} }

type namedStep[T apis.Object] struct {
	name string
	step Step[T]
}

func (n namedStep[T]) Run(ctx context.Context, a *Action[T], next Next) error {
	return n.step.Run(ctx, a, next)
}

func (n namedStep[T]) Name() string { return n.name }

// StepName returns the name given with Named, the Name method of a step
// that has one, or the step's Go type.
func StepName[T apis.Object](s Step[T]) string {
	if n, ok := s.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", s)
}
