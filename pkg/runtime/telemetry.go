package runtime

import "github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"

// Span names and attributes of the spans an action makes when
// Options.TracerProvider is set: one span per action, with one child per
// pipeline step.
const (
	SpanReconcile = observe.SpanReconcile
	SpanStep      = observe.SpanStep

	AttrController = observe.AttrController
	AttrNamespace  = observe.AttrNamespace
	AttrName       = observe.AttrName
	AttrVerb       = observe.AttrVerb
	AttrID         = observe.AttrID
	AttrStep       = observe.AttrStep
)
