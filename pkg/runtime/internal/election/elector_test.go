package election

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// A renewal restarts the observed lease's expiry even within the second
// of the one before: a record's JSON holds its times to the second, so it
// cannot tell such renewals apart (RetryPeriod below 1s renews so).
func TestObserveSubSecondRenewals(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Now())
	e := New(nil, Config{LeaseDuration: 3 * time.Second}, c, logr.Discard())
	base := time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC)
	r := resourcelock.LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 3, RenewTime: metav1.NewTime(base)}
	e.observe(r, "")
	c.Step(2 * time.Second)
	r.RenewTime = metav1.NewTime(base.Add(500 * time.Millisecond))
	e.observe(r, "")
	assert.Equal(t, 3*time.Second, e.expiresIn(), "the renewal restarted the expiry")
	c.Step(time.Second)
	e.observe(r, "")
	assert.Equal(t, 2*time.Second, e.expiresIn(), "the same record again does not")
}
