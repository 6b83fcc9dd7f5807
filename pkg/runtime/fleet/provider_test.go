package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// engagements records what a provider tells.
type engagements struct {
	mu     sync.Mutex
	events []string
	hosts  map[string]string
}

func (e *engagements) Engage(name string, cfg *rest.Config) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, "engage "+name)
	e.hosts[name] = cfg.Host
}

func (e *engagements) Disengage(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, "disengage "+name)
	delete(e.hosts, name)
}

func (e *engagements) log() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// TestDirProvider: each kubeconfig file of the directory engages a cluster
// named after it; a changed file engages it again, a removed one
// disengages it; a file that is no kubeconfig engages nothing.
func TestDirProvider(t *testing.T) {
	home, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "dir-test", Logger: logr.Discard(),
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name string, data []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	write("east.yaml", kubeconfig(t, members["east"]))
	write("west.kubeconfig", kubeconfig(t, members["west"]))
	write("notes.txt", []byte("not a kubeconfig: {"))
	e := &engagements{hosts: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fleet.Dir{Path: dir, Every: 20 * time.Millisecond}.Run(ctx, home, e) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	testkit.Eventually(t, "east and west engaged", func() bool {
		l := e.log()
		slices.Sort(l)
		return slices.Equal(l, []string{"engage east", "engage west"})
	})
	write("east.yaml", kubeconfig(t, members["west"])) // east now points at west's API server
	testkit.Eventually(t, "east engaged again with its new config", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.hosts["east"] == members["west"].Config.Host
	})
	require.NoError(t, os.Remove(filepath.Join(dir, "west.kubeconfig")))
	testkit.Eventually(t, "west disengaged", func() bool { return slices.Contains(e.log(), "disengage west") })
	require.NotContains(t, e.log(), "engage notes")
}
