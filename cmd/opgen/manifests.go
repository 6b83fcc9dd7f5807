package main

import (
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/internal/osenv"
	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// manifestFlags are the flags of opgen manifests that need parsing into
// manifest.Options.
type manifestFlags struct {
	format      string
	out         string
	labels      string
	leaderElect bool
	// metricsSecure is --metrics-secure.
	metricsSecure bool
	// resources: request and limit of CPU and memory, by flag name.
	resources map[string]*string
}

var resourceFlags = []struct {
	flag, usage string
	limit       bool
	name        corev1.ResourceName
}{
	{"cpu-request", "CPU request of the operator container (default 10m)", false, corev1.ResourceCPU},
	{"memory-request", "memory request of the operator container (default 64Mi)", false, corev1.ResourceMemory},
	{"cpu-limit", "CPU limit of the operator container (default 500m)", true, corev1.ResourceCPU},
	{"memory-limit", "memory limit of the operator container (default 256Mi)", true, corev1.ResourceMemory},
}

func newManifestsCommand() *cobra.Command {
	var (
		opts manifest.Options
		mf   = manifestFlags{resources: map[string]*string{}}
	)
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Write the operator's whole manifest: CRDs, RBAC, ServiceAccount and Deployment",
		Long: `Reads config/crd and config/rbac (written by opgen generate) and writes the
Namespace, the CRDs, a ServiceAccount, the ClusterRole and binding, the
leader-election Role and binding, the <name>-metrics-reader ClusterRole
(bind a scraper's ServiceAccount to it) and, with --image, a metrics Service
(https, port 8443; with --service-monitor a Prometheus Operator
ServiceMonitor of it) and a hardened Deployment of the operator. Without
--image those are left out, for running the operator outside the cluster.
See docs/metrics.md.

When the operator serves webhooks (a kind marked +opgen:webhook, whose
configurations opgen generate wrote to config/webhook/manifests.yaml, or a
CRD converted by the conversion webhook), --image adds the webhook Service
(443 to the container's port 9443), the Validating and
MutatingWebhookConfigurations for --namespace, and the RBAC with which the
operator keeps its certificate in a Secret and the caBundle current; with
--cert-manager, a cert-manager Issuer and Certificate instead. See
docs/webhooks.md.

--format says how:
  flat       one multi-document YAML file (--out, default standard output)
  kustomize  a kustomize layout in the config directory: config/default,
             config/manager, config/rbac, config/crd and config/samples, each
             with its kustomization.yaml; kubectl apply -k config/default
             applies the same objects as the flat file
  helm       a Helm chart (--out, default deploy/chart) whose values default
             to these flags; helm template renders the same objects as the
             flat file, less the Namespace (helm install --create-namespace,
             or --set createNamespace=true)`,
		Example: `  opgen manifests --image registry.example.com/widget-operator:v0.1.0 --out deploy/widget-operator.yaml
  opgen manifests --format kustomize --image registry.example.com/widget-operator:v0.1.0
  opgen manifests --format helm --image registry.example.com/widget-operator:v0.1.0 --replicas 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := mf.apply(&opts); err != nil {
				return err
			}
			return writeManifests(cmd, opts, mf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&mf.format, "format", "flat", "flat, kustomize or helm")
	f.StringVar(&opts.Name, "name", "", "operator name (default: from the module path in go.mod, as opgen generate names its roles)")
	f.StringVar(&opts.Namespace, "namespace", "", "namespace the operator runs in (default: <name>-system)")
	f.StringVar(&opts.Image, "image", "", "operator image; without it the Deployment is left out")
	f.StringVar(&opts.WatchNamespace, "watch-namespace", "all", `namespaces to watch: "all" or a comma-separated list`)
	f.Int32Var(&opts.Replicas, "replicas", 1, "Deployment replicas (more than one stand by for leader election)")
	f.StringVar(&opts.ServiceAccount, "service-account", "", "ServiceAccount the operator runs as (default: the operator name)")
	for _, r := range resourceFlags {
		mf.resources[r.flag] = f.String(r.flag, "", r.usage)
	}
	f.BoolVar(&mf.leaderElect, "leader-elect", true, "elect a leader among the replicas (false passes --leader-elect=false)")
	f.StringVar(&opts.LogFormat, "log-format", "", "the operator's --log-format, text or json (default: the runtime's, text)")
	f.IntVar(&opts.Verbosity, "verbosity", 0, "the operator's -v log verbosity")
	f.BoolVar(&mf.metricsSecure, "metrics-secure", true, "the operator serves /metrics over HTTPS to ServiceAccounts bound to <name>-metrics-reader, and gets the RBAC to check them; false serves plain HTTP to anyone")
	f.BoolVar(&opts.ServiceMonitor, "service-monitor", false, "add a Prometheus Operator ServiceMonitor of the metrics Service (needs --image)")
	f.BoolVar(&opts.CertManager, "cert-manager", false, "when the operator serves webhooks, have cert-manager issue their certificate (a self-signed Issuer and a Certificate, mounted into the container) and inject its CA; default: the operator manages both itself")
	f.StringVar(&mf.labels, "labels", "", "labels for every object, as k=v,k2=v2")
	f.StringVar(&opts.ConfigDir, "config-dir", gen.DefaultConfigDir, "directory with crd/ and rbac/ from opgen generate (and where --format kustomize writes)")
	f.StringVarP(&mf.out, "out", "o", "", `output: for flat a file, or "-" for standard output (the default); for helm the chart directory (default deploy/chart)`)
	return cmd
}

// apply parses the flags that need it into opts and fills the defaults
// that come from the project.
func (mf manifestFlags) apply(opts *manifest.Options) error {
	var err error
	if opts.Labels, err = manifest.ParseLabels(mf.labels); err != nil {
		return err
	}
	opts.NoLeaderElection = !mf.leaderElect
	opts.MetricsInsecure = !mf.metricsSecure
	for _, r := range resourceFlags {
		s := *mf.resources[r.flag]
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return fmt.Errorf("--%s %q: %w: write a quantity such as 100m, 1 or 128Mi", r.flag, s, err)
		}
		list := &opts.Resources.Requests
		if r.limit {
			list = &opts.Resources.Limits
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[r.name] = q
	}
	if opts.Name == "" {
		if opts.Name, err = gen.ProjectName("."); err != nil {
			return err
		}
	}
	if opts.Namespace == "" {
		opts.Namespace = opts.Name + "-system"
	}
	return nil
}

func writeManifests(cmd *cobra.Command, opts manifest.Options, mf manifestFlags) error {
	switch mf.format {
	case "flat":
		data, err := manifest.Build(opts)
		if err != nil {
			return err
		}
		if mf.out == "" {
			mf.out = "-"
		}
		return writeOutput(cmd, mf.out, data)
	case "kustomize":
		if mf.out != "" {
			return fmt.Errorf("--format kustomize writes into --config-dir (%s), not --out: leave --out out", opts.ConfigDir)
		}
		written, err := manifest.WriteKustomize(opts)
		for _, p := range written {
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", p)
		}
		return err
	case "helm":
		if mf.out == "" || mf.out == "-" {
			mf.out = manifest.DefaultChartDir
		}
		written, err := manifest.WriteHelm(opts, mf.out)
		for _, p := range written {
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", p)
		}
		return err
	}
	return fmt.Errorf("--format %q: use flat, kustomize or helm", mf.format)
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
