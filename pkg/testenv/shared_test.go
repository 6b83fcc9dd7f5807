package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestSharedControlPlane starts a shared control plane in a directory of
// its own, joins it from another process and from later environments,
// checks when a package gets a private one instead, and that the shared one
// stops itself once idle. Not parallel: it sets environment variables.
func TestSharedControlPlane(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv(EnvSharedDir, dir)
	t.Setenv(EnvIdle, "1s")
	var out bytes.Buffer

	// keeper holds the control plane for the subtests, as a package would.
	keeper := New(Options{Output: &out})
	start := time.Now()
	require.NoError(t, keeper.StartShared(ctx), out.String())
	t.Logf("the first package started the shared control plane in %v", time.Since(start))
	require.True(t, keeper.Shared(), out.String())
	st, err := readState(dir)
	require.NoError(t, err)
	require.NotNil(t, st, "no state file after StartShared")
	defer func() { waitStopped(t, dir, st.Supervisor) }()
	defer keeper.Stop()

	t.Run("a later package joins it", func(t *testing.T) {
		e := New(Options{Output: &out})
		start := time.Now()
		require.NoError(t, e.StartShared(ctx))
		t.Logf("joined in %v", time.Since(start))
		defer e.Stop()
		assert.True(t, e.Shared())
		assert.Equal(t, keeper.Config.Host, e.Config.Host)
		_, err := e.Clientset().CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		require.NoError(t, err)
	})

	t.Run("another process joins it", func(t *testing.T) {
		hostFile := filepath.Join(t.TempDir(), "host")
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedChild$", "-test.v")
		cmd.Env = append(os.Environ(), "OPGEN_TESTENV_CHILD=shared", "OPGEN_TESTENV_HOST="+hostFile)
		got, err := cmd.CombinedOutput()
		require.NoError(t, err, string(got))
		host, err := os.ReadFile(hostFile)
		require.NoError(t, err, string(got))
		assert.Equal(t, keeper.Config.Host, string(host))
		assert.Empty(t, liveUsersExcept(dir), "the child's record outlived it")
	})

	t.Run("a held exclusive name gets a private one", func(t *testing.T) {
		a := New(Options{Output: &out, Exclusive: []string{"widgets.example.com"}})
		require.NoError(t, a.StartShared(ctx))
		defer a.Stop()
		require.True(t, a.Shared())
		out.Reset()
		b := New(Options{Output: &out, Exclusive: []string{"widgets.example.com"}})
		require.NoError(t, b.StartShared(ctx))
		defer b.Stop()
		assert.False(t, b.Shared())
		assert.NotEqual(t, a.Config.Host, b.Config.Host)
		assert.Contains(t, out.String(), "widgets.example.com is in use on the shared control plane by another test package")
		assert.Contains(t, out.String(), "starting a private control plane")
	})

	t.Run("opting out gets a private one", func(t *testing.T) {
		t.Setenv(EnvShared, "0")
		e := New(Options{Output: &out})
		require.NoError(t, e.StartShared(ctx))
		defer e.Stop()
		assert.False(t, e.Shared())
	})

	t.Run("its servers cannot be stopped by a user", func(t *testing.T) {
		assert.PanicsWithValue(t, "testenv: StopAPIServer on the shared control plane would break the other packages using it; set Options.Private in this package's testenv.Options",
			keeper.StopAPIServer)
	})

	t.Run("an unhealthy one is replaced", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv(EnvSharedDir, dir)
		gone := exec.Command("true")
		require.NoError(t, gone.Run())
		dead := identity{PID: gone.Process.Pid}
		data, err := json.Marshal(sharedState{Supervisor: dead, Host: "https://127.0.0.1:1", Kubeconfig: filepath.Join(dir, "none")})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, stateFile), data, 0o600))
		out.Reset()
		e := New(Options{Output: &out})
		require.NoError(t, e.StartShared(ctx))
		assert.True(t, e.Shared())
		assert.Contains(t, out.String(), "is unhealthy (its supervisor, pid")
		st, err := readState(dir)
		require.NoError(t, err)
		e.Stop()
		waitStopped(t, dir, st.Supervisor)
	})
}

// TestSharedChild is the child half of "another process joins it": it
// joins and exits without Stop, as a crashed package would.
func TestSharedChild(t *testing.T) {
	if os.Getenv("OPGEN_TESTENV_CHILD") != "shared" {
		t.Skip("runs only as the child process of TestSharedControlPlane")
	}
	e := New(Options{})
	require.NoError(t, e.StartShared(context.Background()))
	require.True(t, e.Shared())
	require.NoError(t, os.WriteFile(os.Getenv("OPGEN_TESTENV_HOST"), []byte(e.Config.Host), 0o600))
}

func liveUsersExcept(dir string) []sharedUser {
	var others []sharedUser
	for _, u := range liveUsers(dir) {
		if u.PID != os.Getpid() {
			others = append(others, u)
		}
	}
	return others
}

// waitStopped waits for the supervisor to stop itself, with no user left
// and a second of idle time.
func waitStopped(t *testing.T, dir string, supervisor identity) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true,
		func(context.Context) (bool, error) { return !supervisor.alive(), nil })
	require.NoError(t, err, "the idle shared control plane's supervisor (pid %d) did not stop itself within 60s", supervisor.PID)
	_, err = os.Stat(filepath.Join(dir, stateFile))
	assert.ErrorIs(t, err, os.ErrNotExist, "the stopped control plane left its state file")
}
