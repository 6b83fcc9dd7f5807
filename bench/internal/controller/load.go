package controller

import (
	"context"
	"strconv"
	"time"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	loadv1 "github.com/opgen-sdk/opgen/bench/apis/load/v1"
	"github.com/opgen-sdk/opgen/bench/internal/probe"
	plug "github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// LoadController is the opgen side of the benchmark: one handler for the
// three modes of package probe. The pipeline does the writing: ApplyStatus
// writes the status when it differs from the cache (with
// observedGeneration), ApplyOwned applies the declared ConfigMap when
// its hash differs.
type LoadController struct {
	Mode string
	// KeepSpec keeps the owned mode's cache of a Load in every mode.
	KeepSpec bool
	Workers  int
	Requeue  time.Duration
	Probe    *probe.Probe
}

// NewLoadController returns a handler in the default mode; the benchmark's
// operator builds its own from flags and registers it with SetupLoad.
func NewLoadController(op *runtime.Operator) *LoadController {
	return &LoadController{}
}

// Configure sets the workers, and watches ConfigMaps only in owned mode
// (the controller-runtime side does the same).
func (c *LoadController) Configure(opts *runtime.ControllerOptions[*loadv1.Load]) {
	opts.Workers = c.Workers
	if c.Mode != probe.ModeOwned {
		opts.Owns = nil
		// Only owned mode reads the spec (ConfigData: the fields the
		// cacheSpec marker of Load keeps); the other modes cache none of
		// it, unless KeepSpec asks for the owned mode's cache.
		if !c.KeepSpec {
			opts.Project = func(l *loadv1.Load) { l.Spec = loadv1.LoadSpec{} }
			opts.CacheSpec = []string{}
		}
	}
}

// Add runs the first time the controller sees a Load.
func (c *LoadController) Add(ctx context.Context, a *plug.Action[*loadv1.Load]) error {
	return c.Reconcile(ctx, a)
}

// Modify runs when a Load's spec changed.
func (c *LoadController) Modify(ctx context.Context, a *plug.Action[*loadv1.Load]) error {
	return c.Reconcile(ctx, a)
}

// Reconcile does what the mode says.
func (c *LoadController) Reconcile(_ context.Context, a *plug.Action[*loadv1.Load]) error {
	obj := a.Object
	c.Probe.Reconciled(obj.Namespace, obj.Name, obj.Generation)
	switch c.Mode {
	case probe.ModeStatus:
		obj.Status.Heartbeat = c.Probe.Heartbeat()
	case probe.ModeOwned:
		obj.Status.Phase = "Ready"
		a.Own(corev1ac.ConfigMap(obj.Name, obj.Namespace).WithData(ConfigData(obj)))
	}
	if c.Requeue > 0 {
		a.RequeueAfter(c.Requeue)
	}
	return nil
}

// ConfigData is the data of the ConfigMap a Load owns in owned mode; both
// operators under test derive it the same way.
func ConfigData(l *loadv1.Load) map[string]string {
	data := make(map[string]string, len(l.Spec.Config)+2)
	for k, v := range l.Spec.Config {
		data[k] = v
	}
	data["image"] = l.Spec.Image
	data["replicas"] = strconv.Itoa(int(l.Spec.Replicas))
	return data
}
