package runtime

// The collectors and gatherers /metrics serves beside the operator's own.

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// SharedCollector registers c with the operator's registry and returns it,
// or returns the collector of the same description registered before. The
// packages built on the runtime (scheduler, task) share one set of
// collectors per operator, however many schedulers or runners it has. It
// panics when c conflicts with a different collector of the same name, a
// programming error.
func SharedCollector[C prometheus.Collector](op *Operator, c C) C {
	err := op.metrics.Registry.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("runtime.SharedCollector: %v", err))
}

// AddGatherer serves what g gathers on /metrics too, beside the operator's
// registry (a fleet serves its clusters' metrics so). Call it before Run.
func (o *Operator) AddGatherer(g prometheus.Gatherer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gatherers = append(o.gatherers, g)
}
