package runtime

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

// Main is an operator's whole main function: it binds opts to the
// command-line flags (BindFlags, plus --kubeconfig), loads the REST config
// (LoadConfig), builds the operator, calls setup (the generated
// controller.Setup, which registers every controller) and runs until
// SIGINT or SIGTERM. On an error it prints it and exits with status 1.
// With --preview (Options.Preview) it prints the report and exits: with
// status 1 when something would change or an action failed
// (ErrPreviewChanges, ErrPreviewFailed), 0 when nothing would.
// A replica that lost its Lease (it could not renew in time) with every
// handler returned runs the operator again, in the same process and
// under the same identity, as a candidate: when no other replica took the
// Lease meanwhile, as in an outage of the API server, it leads again at
// once.
//
//	func main() { runtime.Main(runtime.Options{Name: "hello-operator"}, controller.Setup) }
func Main(opts Options, setup func(*Operator) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runMain(ctx, flag.CommandLine, os.Args[1:], opts, setup); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
}

func runMain(ctx context.Context, fs *flag.FlagSet, args []string, opts Options, setup func(*Operator) error) error {
	opts.BindFlags(fs)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := LoadConfig(*kubeconfig)
	if err != nil {
		return err
	}
	for first := true; ; first = false {
		op, err := New(cfg, opts)
		if err != nil {
			return err
		}
		if first { // klog's logger is a global the last run's reflectors may still read
			klog.SetLogger(op.log.WithName("client-go")) // one log pipeline
		}
		if err := setup(op); err != nil {
			return fmt.Errorf("set up the controllers: %w", err)
		}
		err = op.Run(ctx)
		if !runAgain(ctx, op, err) {
			return err
		}
		// The same identity: when the Lease still names this replica (no
		// other took it, as after an outage of the API server), the new
		// operator takes it back at once instead of a lease duration later.
		opts.LeaderElection.Identity = op.opts.LeaderElection.Identity
		op.log.Info("lost the lease with every handler returned: running again as a candidate, under the same identity", "identity", opts.LeaderElection.Identity, "error", err.Error())
	}
}

// runAgain reports whether Main runs the operator again after its Run
// returned err: it lost its Lease (a leader that could not renew in time,
// as in an outage of the API server), ctx still runs, and no handler or
// Runnable was left behind. Otherwise the process ends, and the
// kubelet's restart starts it afresh. On true, a main of one's own
// (fleet.Main) runs a new operator under the same Identity.
func runAgain(ctx context.Context, op *Operator, err error) bool {
	lost := errors.Is(err, ErrLostLeadership) || errors.Is(err, ErrLostMembership)
	return lost && ctx.Err() == nil && len(op.inflight.List()) == 0
}
