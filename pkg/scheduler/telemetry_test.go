package scheduler_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/scheduler"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// TestFetchEvents: Bonny's scheduler nodes and pods fetch events have
// typed counterparts: the scheduler's pod list is a pods fetch, and each
// placement reads the nodes (started, then succeeded with the count).
func TestFetchEvents(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	createNode(t, ns+"-cheap", map[string]string{"test": ns, "cheap": "true"}, true)
	op := newOperator(t, ns)
	name := "fetch-" + ns
	var mu sync.Mutex
	var seen []string
	telemetry.On(op.Telemetry(), func(e telemetry.Event) {
		var f telemetry.Fetch
		switch e := e.(type) {
		case telemetry.SchedulerFetchStarted:
			f = e.Fetch
		case telemetry.SchedulerFetchSucceeded:
			f = e.Fetch
			if f.Resource == telemetry.FetchNodes && e.Objects == 0 {
				t.Errorf("a nodes fetch found no node, but one exists")
			}
		case telemetry.SchedulerFetchFailed:
			f = e.Fetch
		default:
			return
		}
		if f.Scheduler == name {
			mu.Lock()
			seen = append(seen, e.Name()+" "+f.Resource)
			mu.Unlock()
		}
	})
	require.NoError(t, scheduler.Register(op, cheapest(ns), scheduler.Options{Name: name}))
	run(t, op)
	createPod(t, ns, "p", name)
	eventually(t, "p bound", func() bool { return nodeOf(t, ns, "p") != "" })
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, seen, "scheduler.fetch.succeeded pods", "the pod list is the pods fetch")
	assert.Contains(t, seen, "scheduler.fetch.started nodes")
	assert.Contains(t, seen, "scheduler.fetch.succeeded nodes")
	assert.NotContains(t, seen, "scheduler.fetch.failed nodes")
}
