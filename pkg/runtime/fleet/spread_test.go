package fleet_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// TestSpreadOverReplicas: with sharding, two replicas share three clusters,
// each engaged by exactly one of them and never by both at once; when one
// replica stops, the other takes its clusters; when it comes back, they
// are shared again.
func TestSpreadOverReplicas(t *testing.T) {
	ns := home.Namespace(t)
	memberNamespace(t, ns)
	clusterSecret(t, ns, "east", members["east"])
	clusterSecret(t, ns, "west", members["west"])
	j := &journal{}
	replica := func(id string) *fleet.Fleet {
		opts := runtime.Options{Name: "spread-test", Namespaces: []string{ns}, LeaderElection: election(ns, id), Sharding: true,
			MetricsAddr: "0", HealthAddr: "0", Logger: logr.Discard()}
		f, err := fleet.New(home.Config, fleet.Options{Options: opts, Clusters: fleet.Secrets{Namespace: ns}, HomeCluster: "home"}, setup(j, id))
		require.NoError(t, err)
		return f
	}
	all := []string{"east", "home", "west"}
	var (
		mu      sync.Mutex
		fleets  = map[string]*fleet.Fleet{}
		overlap []string
	)
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	go func() { // samples what each replica engages: never one cluster twice
		for watchCtx.Err() == nil {
			seen := map[string]string{}
			mu.Lock()
			for id, f := range fleets {
				for _, c := range f.Clusters() {
					if other, ok := seen[c]; ok {
						overlap = append(overlap, c+" by "+other+" and "+id)
					}
					seen[c] = id
				}
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := func(id string) func() {
		f := replica(id)
		mu.Lock()
		fleets[id] = f
		mu.Unlock()
		return startFleet(t, f)
	}
	engaged := func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for id, f := range fleets {
			out[id] = f.Clusters()
		}
		return out
	}
	shared := func() bool {
		e := engaged()
		var union []string
		for _, cs := range e {
			if len(cs) == 0 || len(cs) > 2 {
				return false
			}
			union = append(union, cs...)
		}
		slices.Sort(union)
		return slices.Equal(union, all)
	}
	stopA := start("replica-a")
	start("replica-b")
	testkit.Eventually(t, "the three clusters shared by the two replicas", shared)
	t.Logf("shared: %v", engaged())

	stopped := time.Now()
	stopA()
	mu.Lock()
	delete(fleets, "replica-a")
	mu.Unlock()
	testkit.Eventually(t, "replica-b engages all three", func() bool { return slices.Equal(engaged()["replica-b"], all) })
	t.Logf("replica-a stopped: replica-b engaged all three %v later", time.Since(stopped).Round(time.Millisecond))

	start("replica-c")
	testkit.Eventually(t, "shared again once replica-c joined", shared)
	t.Logf("replica-c joined: %v", engaged())
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, overlap, "a cluster engaged by two replicas at once")
}

// TestAssignIsBalancedAndStable: every replica computes the same
// assignment from the same sets; no member holds more than its share,
// rounded up; a member that leaves moves only its own clusters, and one
// that joins moves only what goes over the members' new share.
func TestAssignIsBalancedAndStable(t *testing.T) {
	for n := 1; n <= 30; n++ {
		var clusters []string
		for i := range n {
			clusters = append(clusters, fmt.Sprintf("cluster-%d", i))
		}
		for m := 2; m <= 6; m++ {
			var members []string
			for i := range m {
				members = append(members, fmt.Sprintf("replica-%d", i))
			}
			before := fleet.Assign(clusters, members, nil)
			reversed := slices.Clone(clusters)
			slices.Reverse(reversed)
			require.Equal(t, before, fleet.Assign(reversed, reversedOf(members), nil), "the same sets in another order")
			checkBalanced(t, before, clusters, members)
			for _, gone := range members {
				rest := slices.DeleteFunc(slices.Clone(members), func(s string) bool { return s == gone })
				after := fleet.Assign(clusters, rest, before)
				checkBalanced(t, after, clusters, rest)
				for c, was := range before {
					if was != gone {
						assert.Equal(t, was, after[c], "%d clusters, %s left: %s moved from %s", n, gone, c, was)
					}
				}
			}
			joined := append(slices.Clone(members), "replica-new")
			after := fleet.Assign(clusters, joined, before)
			checkBalanced(t, after, clusters, joined)
			bound := (n + len(joined) - 1) / len(joined)
			oldLoad := map[string]int{}
			for _, m := range before {
				oldLoad[m]++
			}
			surplus, moved := 0, 0
			for _, l := range oldLoad {
				surplus += max(0, l-bound)
			}
			for c, was := range before {
				if after[c] != was {
					moved++
					assert.Greater(t, oldLoad[was], bound, "%s moved from %s, which was within the new share", c, was)
				}
			}
			assert.Equal(t, surplus, moved, "a member that joins moves what goes over the new share, no more")
		}
	}
}

func checkBalanced(t *testing.T, got map[string]string, clusters, members []string) {
	t.Helper()
	require.Len(t, got, len(clusters), "every cluster has a member")
	load := map[string]int{}
	for _, m := range got {
		load[m]++
	}
	for m, n := range load {
		assert.LessOrEqual(t, n, (len(clusters)+len(members)-1)/len(members), "%s holds more than its share", m)
	}
}

func reversedOf(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
