package ctrlbridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/opgen-sdk/opgen/pkg/internal/runtimehooks"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// CheckName names the operator's checks on the manager's /readyz and
// /healthz.
const CheckName = "opgen"

// New builds an operator for mgr's cluster and adds it to mgr, which then
// runs it (see the package documentation). opts are the operator's
// options, with the manager's in place of these: leader election
// (LeaderElection is ignored but for Identity), the metrics and health
// servers (MetricsAddr and HealthAddr are off) and, when opts.Logger is
// unset, the logger (mgr.GetLogger). Register the controllers on the
// returned operator (the generated Setup) before mgr.Start.
//
// The manager stops the operator before its own reconcilers, within its
// GracefulShutdownTimeout: keep opts.ShutdownTimeout below it when
// handlers may run long.
func New(mgr manager.Manager, opts runtime.Options) (*runtime.Operator, error) {
	opts.LeaderElection = runtime.LeaderElectionOptions{
		Disabled: true,
		Elected:  mgr.Elected(),
		Identity: opts.LeaderElection.Identity,
	}
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	if opts.Logger.IsZero() {
		opts.Logger = mgr.GetLogger().WithName("opgen")
	}
	op, err := runtime.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, err
	}
	metrics := &gathered{from: op.Registry(), skip: HostSeries}
	if err := ctrlmetrics.Registry.Register(metrics); err != nil {
		return nil, fmt.Errorf("ctrlbridge: serve the operator's metrics on the manager's /metrics: %w", err)
	}
	if err := mgr.AddReadyzCheck(CheckName, func(r *http.Request) error { return op.CheckReady(r.Context()) }); err != nil {
		return nil, fmt.Errorf("ctrlbridge: %w", err)
	}
	health := func(r *http.Request) error { return runtimehooks.Of[*runtime.Operator]().CheckHealth(op, r) }
	if err := mgr.AddHealthzCheck(CheckName, health); err != nil {
		return nil, fmt.Errorf("ctrlbridge: %w", err)
	}
	if err := mgr.Add(hosted{op, metrics}); err != nil {
		return nil, fmt.Errorf("ctrlbridge: %w", err)
	}
	return op, nil
}

// HostSeries reports the series the manager's registry has already: the
// Go runtime's and the process's, which controller-runtime registers.
func HostSeries(name string) bool {
	return strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
}

// hosted is the operator as a Runnable of the manager. It needs no
// leader election: it starts with the manager's caches, so that its own
// fill before the election, and waits for Manager.Elected to work.
type hosted struct {
	op      *runtime.Operator
	metrics *gathered
}

var (
	_ manager.Runnable               = hosted{}
	_ manager.LeaderElectionRunnable = hosted{}
)

// Start runs the operator until ctx ends; its series leave the manager's
// /metrics then.
func (h hosted) Start(ctx context.Context) error {
	h.metrics.active.Store(true)
	defer h.metrics.active.Store(false)
	err := h.op.Run(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// NeedLeaderElection is false: see hosted.
func (hosted) NeedLeaderElection() bool { return false }
