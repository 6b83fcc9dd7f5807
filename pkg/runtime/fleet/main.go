package fleet

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/opgen-sdk/opgen/pkg/internal/runtimehooks"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// Main is the whole main function of an operator that works in several
// clusters, as runtime.Main is for one: it binds the runtime's flags and
// the fleet's, loads the home cluster's config, and runs the fleet until
// SIGINT or SIGTERM; like runtime.Main, it runs the fleet again as a
// candidate when it lost its Lease with every handler returned. The flags
// choose the provider when opts.Clusters is
// unset:
//
//	--cluster-kubeconfig-dir     a directory of kubeconfig files (Dir)
//	--cluster-secrets-namespace  where the clusters' Secrets are (Secrets; default the operator's namespace)
//	--cluster-secrets-label      the label of those Secrets (default opgen.dev/cluster)
//	--home-cluster               the home cluster's name as a member; "" leaves it out
//
//	func main() { fleet.Main(fleet.Options{Options: runtime.Options{Name: "hello-operator"}}, controller.Setup) }
func Main(opts Options, setup func(*runtime.Operator) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runMain(ctx, flag.CommandLine, os.Args[1:], opts, setup); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
}

// setKlogLogger sends client-go's klog output to the fleet's logger; the
// tests, which run many fleets in one process, leave klog alone.
var setKlogLogger = func(l logr.Logger) { klog.SetLogger(l) }

func runMain(ctx context.Context, fs *flag.FlagSet, args []string, opts Options, setup func(*runtime.Operator) error) error {
	opts.BindFlags(fs)
	kubeconfig := fs.String("kubeconfig", "", "path to the home cluster's kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	var secrets Secrets
	dir := fs.String("cluster-kubeconfig-dir", "", "find the member clusters in the kubeconfig files of this directory, named after the files")
	fs.StringVar(&secrets.Namespace, "cluster-secrets-namespace", "", "find the member clusters in Secrets of this namespace of the home cluster (default: the operator's namespace)")
	fs.StringVar(&secrets.Label, "cluster-secrets-label", DefaultClusterLabel, "the label of the clusters' Secrets; its value names the cluster")
	fs.StringVar(&opts.HomeCluster, "home-cluster", opts.HomeCluster, "work in the home cluster too, under this name (default: not a member)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opts.Clusters == nil {
		opts.Clusters = secrets
		if *dir != "" {
			opts.Clusters = Dir{Path: *dir}
		}
	}
	cfg, err := runtime.LoadConfig(*kubeconfig)
	if err != nil {
		return err
	}
	for first := true; ; first = false {
		f, err := New(cfg, opts, setup)
		if err != nil {
			return err
		}
		if first {
			// Once: klog's logger is a global that the last run's
			// reflectors may still read as they stop.
			setKlogLogger(f.Home().Logger().WithName("client-go"))
		}
		err = f.Run(ctx)
		if !runtimehooks.Of[*runtime.Operator]().RunAgain(ctx, f.Home(), err) {
			return err
		}
		// As runtime.Main: a replica that lost its Lease with every
		// handler returned runs again as a candidate, under the same
		// identity, and leads again at once when no other took the Lease.
		opts.LeaderElection.Identity = f.Home().Options().LeaderElection.Identity
		f.log.Info("lost the lease with every handler returned: running the fleet again as a candidate, under the same identity", "identity", opts.LeaderElection.Identity, "error", err.Error())
	}
}
