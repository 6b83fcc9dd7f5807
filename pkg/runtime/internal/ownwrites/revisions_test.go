package ownwrites

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRevisionsRememberTheLatestWrites: the ring forgets the oldest
// version once full.
func TestRevisionsRememberTheLatestWrites(t *testing.T) {
	var r Revisions
	for i := 1; i <= revisionsKept+1; i++ {
		r.Add(strconv.Itoa(i))
	}
	assert.False(t, r.Has("1"), "the oldest is forgotten")
	assert.True(t, r.Has("2"))
	assert.True(t, r.Has(strconv.Itoa(revisionsKept+1)))
	assert.False(t, r.Has("abc"))
}

// TestRevisionsTransport: the version a stored write answers with is
// recorded, and the body still reaches the caller; a dry run's, a read's
// and a failed write's are not.
func TestRevisionsTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		rv := map[string]string{"/stored": "11", "/dry": "12", "/read": "13", "/failed": "14"}[req.URL.Path]
		if req.URL.Path == "/failed" {
			w.WriteHeader(http.StatusConflict)
		}
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"`+rv+`"},"data":{"resourceVersion":"99"}}`)
	}))
	defer srv.Close()
	var r Revisions
	c := &http.Client{Transport: r.Wrap(srv.Client().Transport)}
	for _, call := range []struct{ method, path string }{
		{http.MethodPatch, "/stored"}, {http.MethodPatch, "/dry?dryRun=All"}, {http.MethodGet, "/read"}, {http.MethodPut, "/failed"},
	} {
		req, err := http.NewRequest(call.method, srv.URL+call.path, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Contains(t, string(body), `"kind":"ConfigMap"`, "the caller reads the body")
		resp.Body.Close()
	}
	assert.True(t, r.Has("11"))
	for _, rv := range []string{"12", "13", "14", "99"} {
		assert.False(t, r.Has(rv), rv)
	}
}
