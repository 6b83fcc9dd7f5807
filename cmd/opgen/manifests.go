package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/cli"
)

func newManifestsCommand() *cobra.Command {
	var opts cli.ManifestsOptions
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
See opgen help metrics. (This is the deployment bundle. kubebuilder's
make manifests, which writes the CRDs and RBAC, is opgen generate.)

--sharding adds --sharding to the Deployment (2 replicas unless
--replicas says otherwise) and a ClusterRole <name>-sharding with patch on
the CRD kinds the leader labels with their buckets. See opgen help
sharding.

When the operator serves webhooks (a kind marked +opgen:webhook, whose
configurations opgen generate wrote to config/webhook/manifests.yaml, or a
CRD converted by the conversion webhook), --image adds the webhook Service
(443 to the container's port 9443), the Validating and
MutatingWebhookConfigurations for --namespace, and the RBAC with which the
operator keeps its certificate in a Secret and the caBundle current; with
--cert-manager, a cert-manager Issuer and Certificate instead. See
opgen help webhooks.

--member writes instead what each member cluster of a fleet needs
(pkg/runtime/fleet, opgen help multicluster): the Namespace, the CRDs, the
ServiceAccount with the controllers' ClusterRole and binding, and the
token Secret <name>-member-token of the ServiceAccount, whose token the
fleet's kubeconfig of that cluster uses. No Deployment, leader-election
Role, metrics or webhooks: the operator runs in the home cluster.

--monitoring DIR also writes, into DIR, a Grafana dashboard of the
operator's metrics (<name>-dashboard.json) and a Prometheus Operator
PrometheusRule of alerts (<name>-prometheusrule.yaml): a stuck handler, no
leader, failing watches, failing actions, timeouts, a fleet cluster not
ready and, with webhooks, a serving certificate near expiry. Both select
the scrape job <name>-metrics, which --service-monitor gives.

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
  opgen manifests --format helm --image registry.example.com/widget-operator:v0.1.0 --replicas 2
  opgen manifests --image registry.example.com/widget-operator:v0.1.0 --sharding --replicas 3 --arg=--workers=8
  opgen manifests --member --out deploy/widget-operator-member.yaml
  opgen manifests --image "$(opgen image --push registry.example.com/widget-operator:v0.1.0)" --service-monitor --monitoring deploy/monitoring`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Manifests(opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "flat", "flat, kustomize or helm")
	f.StringVar(&opts.Name, "name", "", "operator name (default: from the module path in go.mod, as opgen generate names its roles)")
	f.StringVar(&opts.Namespace, "namespace", "", "namespace the operator runs in (default: <name>-system)")
	f.StringVar(&opts.Image, "image", "", "operator image, best by digest as opgen image prints it (registry/name:tag@sha256:...); without it the Deployment is left out")
	f.StringVar(&opts.WatchNamespace, "watch-namespace", "all", `namespaces to watch: "all" or a comma-separated list`)
	f.Int32Var(&opts.Replicas, "replicas", 0, "Deployment replicas (more than one stand by for leader election or, with --sharding, share the objects; default 1, or 2 with webhooks or --sharding)")
	f.BoolVar(&opts.Sharding, "sharding", false, "pass --sharding: every replica caches and handles its share of the objects (opgen help sharding)")
	f.StringArrayVar(&opts.ExtraArgs, "arg", nil, "one more argument of the operator, after opgen's, such as --arg=--workers=8 (repeat it)")
	f.StringVar(&opts.ServiceAccount, "service-account", "", "ServiceAccount the operator runs as (default: the operator name)")
	f.StringVar(&opts.CPURequest, "cpu-request", "", "CPU request of the operator container (default 10m)")
	f.StringVar(&opts.MemoryRequest, "memory-request", "", "memory request of the operator container (default 64Mi)")
	f.StringVar(&opts.CPULimit, "cpu-limit", "", "CPU limit of the operator container (default 500m)")
	f.StringVar(&opts.MemoryLimit, "memory-limit", "", "memory limit of the operator container (default 256Mi)")
	f.BoolVar(&opts.LeaderElect, "leader-elect", true, "elect a leader among the replicas (false passes --leader-elect=false)")
	f.StringVar(&opts.LogFormat, "log-format", "", "the operator's --log-format, text or json (default: the runtime's, text)")
	f.IntVar(&opts.Verbosity, "verbosity", 0, "the operator's -v log verbosity")
	f.BoolVar(&opts.MetricsSecure, "metrics-secure", true, "the operator serves /metrics over HTTPS to ServiceAccounts bound to <name>-metrics-reader, and gets the RBAC to check them; false serves plain HTTP to anyone")
	f.BoolVar(&opts.ServiceMonitor, "service-monitor", false, "add a Prometheus Operator ServiceMonitor of the metrics Service (needs --image)")
	f.BoolVar(&opts.CertManager, "cert-manager", false, "when the operator serves webhooks, have cert-manager issue their certificate (a self-signed Issuer and a Certificate, mounted into the container) and inject its CA; default: the operator manages both itself")
	f.BoolVar(&opts.Member, "member", false, "write the manifest of a member cluster of a fleet: CRDs, ServiceAccount, the controllers' ClusterRole and binding, a token Secret")
	f.StringVar(&opts.Monitoring, "monitoring", "", "also write the Grafana dashboard and the PrometheusRule alerts into this directory")
	f.StringVar(&opts.Labels, "labels", "", "labels for every object, as k=v,k2=v2")
	f.StringVar(&opts.ConfigDir, "config-dir", gen.DefaultConfigDir, "directory with crd/ and rbac/ from opgen generate (and where --format kustomize writes)")
	f.StringVarP(&opts.Out, "out", "o", "", `output: for flat a file, or "-" for standard output (the default); for helm the chart directory (default deploy/chart)`)
	return inProjectDir(cmd, false)
}
