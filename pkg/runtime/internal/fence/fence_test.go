package fence

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestFenceClosesAfterTheRenewDeadline(t *testing.T) {
	t.Parallel()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	f := New(clk, 10*time.Second)
	assert.NoError(t, f.Open(), "a replica that never led is not fenced")

	f.Renewed("leader", clk.Now())
	clk.SetTime(clk.Now().Add(10 * time.Second))
	assert.NoError(t, f.Open(), "open up to the deadline")
	clk.SetTime(clk.Now().Add(time.Millisecond))
	err := f.Open()
	require.Error(t, err, "closed past the deadline")
	assert.True(t, IsClosed(err))
	assert.Contains(t, err.Error(), "10.001s old")

	f.Renewed("leader", clk.Now())
	assert.NoError(t, f.Open(), "a renewal opens it again")

	f.Renewed("member", clk.Now().Add(-11*time.Second))
	assert.Error(t, f.Open(), "any held lease past its deadline closes it")
	f.Released("member")
	assert.NoError(t, f.Open(), "a released lease no longer counts")
	f.Released("leader")
	assert.ErrorContains(t, f.Open(), "no longer leads", "a replica that let every lease go writes nothing")
}

func TestAdmitRefusesWritesOnlyWhileClosed(t *testing.T) {
	t.Parallel()
	var got []string
	clk := clocktesting.NewFakePassiveClock(time.Now())
	f := New(clk, time.Second)
	f.Renewed("leader", clk.Now().Add(-2*time.Second))

	do := func(method, path string) error {
		err := f.Admit(httptest.NewRequest(method, "https://api.test"+path, nil))
		if err == nil {
			got = append(got, method+" "+path)
		}
		return err
	}
	assert.NoError(t, do(http.MethodGet, "/api/v1/namespaces/a/configmaps"), "reads pass")
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		err := do(m, "/apis/apps/v1/namespaces/a/deployments/x")
		assert.True(t, IsClosed(err), "%s is refused: %v", m, err)
	}
	assert.True(t, IsClosed(do(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/a/events")), "Events too")
	assert.NoError(t, do(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/a/leases/op"), "the lease itself passes")
	assert.NoError(t, do(http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews"), "reviews store nothing")
	assert.Equal(t, []string{
		"GET /api/v1/namespaces/a/configmaps",
		"PUT /apis/coordination.k8s.io/v1/namespaces/a/leases/op",
		"POST /apis/authorization.k8s.io/v1/subjectaccessreviews",
	}, got, "what was admitted")
}
