package runtime

import (
	"errors"

	"github.com/go-logr/logr"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/election"
)

// ErrLostLeadership is returned by Run when the operator could not renew
// its lease in time. It stopped working so that another replica can take
// over. Exit and let the Pod restart.
var ErrLostLeadership = errors.New("runtime: lost the leader election lease; stopped working so that another replica can take over")

// elector returns the elector of the operator's Lease named lease. A won
// lease is logged to log as acquired; a lost one ends the work with lost.
func (o *Operator) elector(lease, acquired string, lost error, log logr.Logger) *election.Elector {
	le := o.opts.LeaderElection
	cfg := election.Config{
		Namespace: le.Namespace, LeaseName: lease, Identity: le.Identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		Acquired: acquired, Lost: lost,
	}
	return election.New(o.leases, cfg, o.opts.Clock, log)
}
