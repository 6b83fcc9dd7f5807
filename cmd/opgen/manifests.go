package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/manifest"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

func newManifestsCommand() *cobra.Command {
	var (
		opts          manifest.Options
		out           string
		labels        string
		metricsSecure bool
	)
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Write the operator's whole manifest: CRDs, RBAC, ServiceAccount and Deployment",
		Long: `Reads config/crd and config/rbac (written by opgen generate) and writes one
multi-document YAML file: the Namespace, the CRDs, a ServiceAccount, the
ClusterRole and binding, the leader-election Role and binding, the
<name>-metrics-reader ClusterRole (bind a scraper's ServiceAccount to it) and,
with --image, a metrics Service (https, port 8443; with --service-monitor a
Prometheus Operator ServiceMonitor of it) and a hardened Deployment of the
operator. Without --image those are left out, for running the operator
outside the cluster. See docs/metrics.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			opts.MetricsInsecure = !metricsSecure
			if opts.Labels, err = manifest.ParseLabels(labels); err != nil {
				return err
			}
			if opts.Name == "" {
				if opts.Name, err = gen.ProjectName("."); err != nil {
					return err
				}
			}
			if opts.Namespace == "" {
				opts.Namespace = opts.Name + "-system"
			}
			data, err := manifest.Build(opts)
			if err != nil {
				return err
			}
			return writeOutput(cmd, out, data)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", "", "operator name (default: from the module path in go.mod, as opgen generate names its roles)")
	f.StringVar(&opts.Namespace, "namespace", "", "namespace the operator runs in (default: <name>-system)")
	f.StringVar(&opts.Image, "image", "", "operator image; without it the Deployment is left out")
	f.StringVar(&opts.WatchNamespace, "watch-namespace", "all", `namespaces to watch: "all" or a comma-separated list`)
	f.Int32Var(&opts.Replicas, "replicas", 1, "Deployment replicas (more than one stand by for leader election)")
	f.StringVar(&labels, "labels", "", "labels for every object, as k=v,k2=v2")
	f.BoolVar(&metricsSecure, "metrics-secure", true, "the operator serves /metrics over HTTPS to ServiceAccounts bound to <name>-metrics-reader, and gets the RBAC to check them; false serves plain HTTP to anyone")
	f.BoolVar(&opts.ServiceMonitor, "service-monitor", false, "add a Prometheus Operator ServiceMonitor of the metrics Service (needs --image)")
	f.StringVar(&opts.ConfigDir, "config-dir", gen.DefaultConfigDir, "directory with crd/ and rbac/ from opgen generate")
	f.StringVarP(&out, "out", "o", "-", `output file, or "-" for standard output`)
	return cmd
}

// writeOutput writes data to standard output when out is "-", else to the
// file out, atomically.
func writeOutput(cmd *cobra.Command, out string, data []byte) error {
	if out == "-" {
		_, err := cmd.OutOrStdout().Write(data)
		return err
	}
	if err := osenv.WriteFileAtomic(out, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
