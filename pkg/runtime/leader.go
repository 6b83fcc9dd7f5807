package runtime

import (
	"errors"
	"time"

	"github.com/go-logr/logr"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/election"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fence"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// ErrLostLeadership is returned by Run when the operator could not renew
// its lease in time. It stopped working so that another replica can take
// over. Exit and let the Pod restart.
var ErrLostLeadership = errors.New("runtime: lost the leader election lease; stopped working so that another replica can take over")

// elector returns the elector of the operator's Lease named lease, over
// leases. A won lease is logged to log as acquired; a lost one ends the
// work with lost. Its renewals keep f open (internal/fence): a replica
// whose lease may have passed to another writes nothing.
func (le LeaderElectionOptions) elector(leases coordinationclient.LeasesGetter, clk clock.WithTicker, f *fence.Fence, lease, acquired string, lost error, log logr.Logger) *election.Elector {
	cfg := election.Config{
		Namespace: le.Namespace, LeaseName: lease, Identity: le.Identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		Acquired: acquired, Lost: lost,
		Renewed: func(start time.Time) { f.Renewed(lease, start) },
		Stopped: func() { f.Released(lease) },
	}
	return election.New(leases, cfg, clk, log)
}

// leadership names this replica's lease for telemetry.
func (le LeaderElectionOptions) leadership() telemetry.Leadership {
	l := telemetry.Leadership{Identity: le.Identity}
	if !le.Disabled {
		l.Lease = le.Namespace + "/" + le.LeaseName
	}
	return l
}
