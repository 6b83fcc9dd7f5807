package probe

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
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

// TestReconciledCountsUntilExpect: "all" is printed once, at the Expect-th
// distinct object; a second reconcile of an object does not count; the
// set of keys is dropped then.
func TestReconciledCountsUntilExpect(t *testing.T) {
	var out strings.Builder
	p := newProbe(Flags{Expect: 2}, &out)
	p.Reconciled("ns", "a", 1)
	p.Reconciled("ns", "a", 2)
	assert.Empty(t, out.String(), "one distinct object of two")
	assert.EqualValues(t, 1, p.Stats(false).Distinct)
	p.Reconciled("ns", "b", 1)
	p.Reconciled("ns", "c", 1)
	st := p.Stats(false)
	assert.EqualValues(t, 4, st.Reconciles)
	assert.EqualValues(t, 2, st.Distinct, "counted until Expect")
	assert.Positive(t, st.AllAt)
	assert.Equal(t, "all "+strconv.FormatInt(st.AllAt, 10)+"\n", out.String())
	assert.Nil(t, p.seen, "the set is dropped at Expect")
}

// TestMarkOnce: a moment is printed the first time it is marked, not again.
func TestMarkOnce(t *testing.T) {
	var out strings.Builder
	p := newProbe(Flags{}, &out)
	p.Mark("listed")
	p.Mark("synced")
	p.Mark("listed")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	for i, name := range []string{"listed", "synced"} {
		f := strings.Fields(lines[i])
		require.Len(t, f, 3)
		assert.Equal(t, []string{"mark", name}, f[:2])
		_, err := strconv.ParseInt(f[2], 10, 64)
		assert.NoError(t, err)
	}
}

// TestStartProfile: with EnvStartProfiles an operator expecting objects
// profiles its CPU until the last of them was reconciled, then writes the
// profile out.
func TestStartProfile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvStartProfiles, dir)
	p, err := Start(Flags{Namespace: "ns", Expect: 2, ProbeAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	path := filepath.Join(dir, "start-ns-"+strconv.Itoa(os.Getpid())+".pprof")
	p.Reconciled("ns", "a", 1)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, info.Size(), "written before the last object")
	p.Reconciled("ns", "b", 1)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(data), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, data[:2], "a CPU profile (gzipped protocol buffers)")
}
