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
// does not call next ends the pipeline there. A step may call next more
// than once, but only while its Run runs and from its goroutine.
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
//
// One Next serves every step: it runs the step after the one that called
// it, so a step may call next more than once (each call runs the rest of
// the pipeline again), but only while its Run runs and from its goroutine,
// as the action itself is used.
func (p Pipeline[T]) Run(ctx context.Context, a *Action[T]) error {
	if len(p) == 0 {
		return nil
	}
	c := &chain[T]{p: p, a: a}
	c.next = c.run
	return c.run(ctx)
}

// chain runs one action through a pipeline. at is the step that runs on
// the next call of next; each call puts it back as it found it when the
// rest of the pipeline returns.
type chain[T apis.Object] struct {
	p    Pipeline[T]
	a    *Action[T]
	at   int
	next Next
}

func (c *chain[T]) run(ctx context.Context) error {
	i := c.at
	if i == len(c.p) || c.a.Halted() {
		return nil
	}
	c.at = i + 1
	defer func() { c.at = i }()
	return c.p[i].Run(ctx, c.a, c.next)
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
