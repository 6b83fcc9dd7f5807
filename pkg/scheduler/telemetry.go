package scheduler

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// fetchNodes lists the node cache and reports the read as a nodes fetch.
func (b *binder) fetchNodes() ([]*corev1.Node, error) {
	f := telemetry.Fetch{Scheduler: b.opts.Name, Resource: telemetry.FetchNodes}
	b.op.Telemetry().Emit(telemetry.SchedulerFetchStarted{Fetch: f})
	start := time.Now()
	nodes, err := b.nodes.List(labels.Everything())
	if err != nil {
		b.op.Telemetry().Emit(telemetry.SchedulerFetchFailed{Fetch: f, Err: err})
		return nil, err
	}
	b.op.Telemetry().Emit(telemetry.SchedulerFetchSucceeded{Fetch: f, Objects: len(nodes), Duration: time.Since(start)})
	return nodes, nil
}

// reportPodFetches reports the scheduler's pod watch as its pods fetch:
// the pods waiting for the scheduler come from that watch's lists, one
// SchedulerFetchSucceeded per page, and a failed list or watch is a
// SchedulerFetchFailed. A pods fetch has no Started event: the list
// request's start is not visible to the runtime's ListWatch wrapper before
// it returns.
func reportPodFetches(op *runtime.Operator, name, controller string) {
	f := telemetry.Fetch{Scheduler: name, Resource: telemetry.FetchPods}
	telemetry.On(op.Telemetry(), func(e telemetry.WatchChunkReceived) {
		if e.Controller == controller {
			op.Telemetry().Emit(telemetry.SchedulerFetchSucceeded{Fetch: f, Objects: e.Objects})
		}
	})
	telemetry.On(op.Telemetry(), func(e telemetry.WatchFailed) {
		if e.Controller == controller {
			op.Telemetry().Emit(telemetry.SchedulerFetchFailed{Fetch: f, Err: e.Err})
		}
	})
}
