package runtime

import (
	"context"

	"github.com/go-logr/logr"
)

// waitElected waits until LeaderElectionOptions.Elected is closed, when
// set: a host of the operator (a controller-runtime manager, package
// ctrlbridge) holds the Lease and says when it leads. It reports false
// when ctx ended first: the replica never led.
func (le LeaderElectionOptions) waitElected(ctx context.Context, log logr.Logger) bool {
	elected := le.Elected
	if elected == nil {
		return true
	}
	log.Info("caches synced; waiting for the host to be elected leader")
	select {
	case <-elected:
		return true
	case <-ctx.Done():
		return false
	}
}
