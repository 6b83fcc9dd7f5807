package probe

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountWrites: writes are counted and timed by verb and resource;
// reads are neither.
func TestCountWrites(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	p := &Probe{}
	c := &http.Client{Transport: countWrites{http.DefaultTransport, p}}
	do := func(method, path string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	do(http.MethodPatch, "/apis/g/v1/namespaces/ns/loads/a/status")
	do(http.MethodPatch, "/apis/g/v1/namespaces/ns/loads/b/status")
	do(http.MethodGet, "/apis/g/v1/namespaces/ns/loads/a")
	do(http.MethodDelete, "/api/v1/namespaces/ns/configmaps/a")

	st := p.Stats(false)
	assert.Equal(t, map[string]int64{"PATCH loads/status": 2, "DELETE configmaps": 1}, st.Writes)
	assert.Len(t, st.WriteNanos, 2, "timed by the same keys")
	assert.Positive(t, st.WriteNanos["PATCH loads/status"])
	assert.Positive(t, st.WriteNanos["DELETE configmaps"])
}
