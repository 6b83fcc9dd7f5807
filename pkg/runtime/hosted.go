package runtime

import (
	"context"
	"net/http"
)

// An operator hosted by another part of the process (a controller-runtime
// manager, package ctrlbridge) serves no endpoint and holds no Lease of
// its own: the host asks CheckReady and CheckHealth from its probes,
// gathers Registry from its /metrics, and closes
// LeaderElectionOptions.Elected when it leads.

// CheckHealth returns what /healthz answers: nil unless a health check
// (AddHealthCheck) fails, naming it.
func (o *Operator) CheckHealth(r *http.Request) error {
	_, err := o.checks.run(&o.checks.health, r)
	return err
}

// waitElected waits until LeaderElectionOptions.Elected is closed, when
// set. It reports false when ctx ended first: the replica never led.
func (o *Operator) waitElected(ctx context.Context) bool {
	elected := o.opts.LeaderElection.Elected
	if elected == nil {
		return true
	}
	o.log.Info("caches synced; waiting for the host to be elected leader")
	select {
	case <-elected:
		return true
	case <-ctx.Done():
		return false
	}
}
