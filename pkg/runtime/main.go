package runtime

import (
	"context"
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
	op, err := New(cfg, opts)
	if err != nil {
		return err
	}
	// One log pipeline: client-go's klog output goes to the operator's
	// logger.
	klog.SetLogger(op.log.WithName("client-go"))
	if err := setup(op); err != nil {
		return fmt.Errorf("set up the controllers: %w", err)
	}
	return op.Run(ctx)
}
