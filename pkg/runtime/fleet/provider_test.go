package fleet_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// TestNamespacesAndMulti: fleet.Multi runs two providers under their
// prefixes: fleet.Namespaces makes each labelled namespace of the home
// cluster a cluster whose operator works in it alone, beside a member
// cluster from a kubeconfig file (fleet.Dir). A namespace that loses its
// label is disengaged.
func TestNamespacesAndMulti(t *testing.T) {
	nsA, nsB := home.Namespace(t), home.Namespace(t)
	memberNamespace(t, nsA)
	selector := "opgen-test/tenants=" + nsA
	for _, ns := range []string{nsA, nsB} {
		_, err := home.Clientset().CoreV1().Namespaces().Patch(context.Background(), ns, types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"opgen-test/tenants":"`+nsA+`"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "east.yaml"), kubeconfig(t, members["east"]), 0o600))
	j := &journal{}
	opts := runtime.Options{Name: "fleet-multi", Namespaces: []string{nsA}, LeaderElection: election(nsA, "solo")}
	f, err := fleet.New(home.Config, fleet.Options{Options: opts, Clusters: fleet.Multi{
		"ns":  fleet.Namespaces{Selector: selector},
		"dir": fleet.Dir{Path: dir, Every: 100 * time.Millisecond},
	}}, setup(j, "solo"))
	require.NoError(t, err)
	startFleet(t, f)
	want := []string{"dir-east", "ns-" + nsA, "ns-" + nsB}
	slices.Sort(want)
	testkit.Eventually(t, "the clusters of both providers engaged", func() bool { return slices.Equal(f.Clusters(), want) })
	handledIn(t, home, nsB, "g-b", "ns-"+nsB, createGadget(t, home, nsB, "g-b"))
	handledIn(t, home, nsA, "g-a", "ns-"+nsA, createGadget(t, home, nsA, "g-a"))
	handledIn(t, members["east"], nsA, "g-east", "dir-east", createGadget(t, members["east"], nsA, "g-east"))
	handled := []string{"dir-east/g-east", "ns-" + nsA + "/g-a", "ns-" + nsB + "/g-b"}
	slices.Sort(handled)
	assert.Equal(t, handled, slices.Sorted(maps.Keys(j.keys())),
		"each Gadget handled by the cluster of its namespace only")

	_, err = home.Clientset().CoreV1().Namespaces().Patch(context.Background(), nsB, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"opgen-test/tenants":null}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	testkit.Eventually(t, "the namespace without its label disengaged", func() bool {
		return slices.Equal(f.Clusters(), []string{"dir-east", "ns-" + nsA})
	})
}
