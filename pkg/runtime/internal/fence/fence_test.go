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

func TestClientRefusesWritesOnlyWhileClosed(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
	}))
	defer srv.Close()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	f := New(clk, time.Second)
	c := f.Client(srv.Client())
	f.Renewed("leader", clk.Now().Add(-2*time.Second))

	do := func(method, path string) error {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
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
	}, got, "what reached the server")
}
