// Command opgen is the opgen operator under test: the generated glue of
// the Load kind (internal/controller) run by pkg/runtime with the stock
// options, configured by the flags of package probe.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/opgen-sdk/opgen/bench/internal/controller"
	"github.com/opgen-sdk/opgen/bench/internal/probe"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "opgen operator:", err)
		os.Exit(1)
	}
}

func run() error {
	var f probe.Flags
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	f.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])
	f.Complete()
	p, err := probe.Start(f)
	if err != nil {
		return err
	}
	cfg, err := p.RESTConfig()
	if err != nil {
		return err
	}
	op, err := runtime.New(cfg, runtime.Options{
		Name:        "opgen-load",
		Namespaces:  []string{f.Namespace},
		MetricsAddr: "0",
		HealthAddr:  "0",
		Workers:     f.Workers,
		Sharding:    f.Sharding,
		LeaderElection: runtime.LeaderElectionOptions{
			Disabled:      !f.LeaderElect,
			Namespace:     f.LeaseNamespace,
			LeaseName:     f.LeaseName,
			Identity:      f.Identity,
			LeaseDuration: f.LeaseDuration,
			RenewDeadline: f.RenewDeadline,
			RetryPeriod:   f.RetryPeriod,
		},
	})
	if err != nil {
		return err
	}
	h := &controller.LoadController{Mode: f.Mode, KeepSpec: f.KeepSpec, Workers: f.Workers, Requeue: f.Requeue, Probe: p}
	if err := controller.SetupLoad(op, h); err != nil {
		return err
	}
	markStart(op, p)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.LeaderElect {
		go reportLead(ctx, op, p)
	}
	return op.Run(ctx)
}

// markStart marks the phases of the operator's start from its telemetry:
// the first watch of the Load kind opened, its initial list arrived (the
// initial-events-end bookmark of a streamed list, the last page of a
// paged one), its cache synced (the informer handed every listed object
// to the controller's queue) and the lease won. The subscribers run on
// the emitting goroutines and print one line each, once.
func markStart(op *runtime.Operator, p *probe.Probe) {
	bus := op.Telemetry()
	load := func(w telemetry.Watch) bool { return w.GVK.Kind == "Load" }
	telemetry.On(bus, func(e telemetry.WatchOpened) {
		if load(e.Watch) {
			p.Mark("watch")
		}
	})
	telemetry.On(bus, func(e telemetry.WatchChunkReceived) {
		if load(e.Watch) && !e.More {
			p.Mark("listed")
		}
	})
	telemetry.On(bus, func(e telemetry.WatchStarted) {
		if load(e.Watch) {
			p.Mark("synced")
		}
	})
	telemetry.On(bus, func(telemetry.LeaderAcquired) { p.Mark("leading") })
}

// reportLead prints the probe's lead line once the operator leads. The
// runtime has no election callback, so it polls; the harness measures
// handovers from the Lease object, not from this line.
func reportLead(ctx context.Context, op *runtime.Operator, p *probe.Probe) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for !op.Leading() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	p.Lead()
}
