package gen

import (
	"context"
	"go/token"

	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Generator is one kind of output. Every generator registers the markers
// it reads, then generates from the shared Context into the staged Output.
// Problems in the user's code go to Context.Errors with a position; the
// returned error is for failures that are not the user's (a library
// failing, a bug).
type Generator interface {
	RegisterMarkers(into *markers.Registry) error
	Generate(ctx *Context) error
}

// Preparer is implemented by generators that need the shared packages
// before they run concurrently: the runner calls Prepare in its own
// goroutine, after the API model is built and before any Generate, and
// Prepare takes from the packages what Generate will need.
type Preparer interface {
	Prepare(ctx *Context) error
}

// Concurrent is implemented by generators whose Generate reads only the API
// model and what Prepare took, never the shared package graph, whose lazy
// parsing and type-checking is not safe for concurrent use. The runner runs
// them in parallel with the others.
type Concurrent interface {
	Concurrent()
}

// Context is what every generator of a run shares: the project, the
// packages loaded once by controller-tools, the markers collected from
// them, the API model derived from the markers, the staged output and the
// errors.
type Context struct {
	context.Context
	Project *Project
	// Roots are the packages the patterns select, loaded lazily by
	// controller-tools' loader.
	Roots []*loader.Package
	// Collector parses markers from Roots with the registry every
	// generator registered into.
	Collector *markers.Collector
	// Fset is the file set of every loaded file.
	Fset *token.FileSet
	// Checker type-checks Roots on demand.
	Checker *loader.TypeChecker
	// API is the model of the API groups, versions, kinds and controllers.
	API *API
	// Output stages what the run writes.
	Output *Output
	// Errors collects the user's errors.
	Errors *Errors
}

// Position returns the position of pos in the shared file set.
func (c *Context) Position(pos token.Pos) token.Position {
	return c.Fset.Position(pos)
}

var noPos token.Position
