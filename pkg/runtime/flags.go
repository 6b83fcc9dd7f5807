package runtime

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// BindFlags binds the options to command-line flags on fs, with the current
// values as defaults:
//
//	--watch-namespace          comma-separated namespaces, or "all"
//	--leader-elect             leader election on or off
//	--leader-elect-namespace   namespace of the Lease
//	--leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period
//	--sharding                 spread the objects over the replicas
//	--metrics-bind-address     "0" disables
//	--metrics-secure           HTTPS with authentication and authorization (default true)
//	--metrics-cert-dir         tls.crt and tls.key for HTTPS (default self-signed)
//	--health-probe-bind-address "0" disables
//	--pprof-bind-address       off unless given
//	--log-format               text or json
//	-v                         log verbosity
//	--shutdown-timeout
//	--workers
//	--keep-managed-fields
//	--kube-api-qps, --kube-api-burst
//	--migrate-storage          move stored objects to the storage version (default true)
//	--webhook-bind-address     "0" disables (default ":0")
//	--webhook-cert-dir         mounted tls.crt, tls.key and ca.crt
//	--webhook-mode             auto, cluster or local
//	--preview                  report what a run would change, change nothing, exit
//	--preview-format           yaml or json (default yaml)
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.Func("watch-namespace", "namespaces to watch, comma-separated, or \"all\" (default $"+EnvWatchNamespace+", then all)", func(s string) error {
		o.Namespaces = splitNamespaces(s)
		return nil
	})
	fs.BoolFunc("leader-elect", "elect a leader with a Lease; only the leader works (default true)", func(s string) error {
		switch s {
		case "true", "1":
			o.LeaderElection.Disabled = false
		case "false", "0":
			o.LeaderElection.Disabled = true
		default:
			return fmt.Errorf("want true or false, got %q", s)
		}
		return nil
	})
	le := &o.LeaderElection
	fs.StringVar(&le.Namespace, "leader-elect-namespace", le.Namespace, "namespace of the leader election Lease (default $"+EnvPodNamespace+")")
	fs.DurationVar(&le.LeaseDuration, "leader-elect-lease-duration", le.LeaseDuration, "how long a lease holds without renewal (default 15s)")
	fs.DurationVar(&le.RenewDeadline, "leader-elect-renew-deadline", le.RenewDeadline, "how long the leader tries to renew before giving up (default 10s)")
	fs.DurationVar(&le.RetryPeriod, "leader-elect-retry-period", le.RetryPeriod, "pause between tries to acquire or renew (default 2s)")
	fs.BoolVar(&o.Sharding, "sharding", o.Sharding, "spread the objects over the replicas, each caching and handling its share (needs leader election; default false)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of /metrics; \"0\" disables (default \":0\", a free port)")
	fs.BoolFunc("metrics-secure", "serve /metrics over HTTPS to bearer tokens the API server authenticates and authorizes; false serves plain HTTP to anyone (default true)", func(s string) error {
		secure, err := strconv.ParseBool(s)
		o.MetricsInsecure = !secure
		return err
	})
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir, "directory of tls.crt and tls.key for /metrics over HTTPS (default: a self-signed certificate)")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "address of /healthz and /readyz; \"0\" disables (default \":0\", a free port)")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "address of net/http/pprof (/debug/pprof/); off unless given, \"0\" is off too")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "log format: text or json (default text)")
	fs.IntVar(&o.Verbosity, "v", o.Verbosity, "log verbosity: V(n) lines up to n are written (default 0)")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "how long in-flight work may run after SIGTERM (default 30s)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "workers per controller (default 2)")
	fs.BoolVar(&o.KeepManagedFields, "keep-managed-fields", o.KeepManagedFields, "keep metadata.managedFields in the caches")
	fs.Func("kube-api-qps", fmt.Sprintf("requests per second to the API server, per client; negative: no limit (default %g)", DefaultKubeAPIQPS), func(s string) error {
		q, err := strconv.ParseFloat(s, 32)
		o.KubeAPIQPS = float32(q)
		return err
	})
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, fmt.Sprintf("requests above --kube-api-qps allowed in a burst, per client (default %d)", DefaultKubeAPIBurst))
	fs.BoolFunc("migrate-storage", "move stored objects to their CRD's storage version and trim status.storedVersions (default true)", func(s string) error {
		migrate, err := strconv.ParseBool(s)
		o.SkipStorageMigration = !migrate
		return err
	})
	fs.StringVar(&o.Webhook.Addr, "webhook-bind-address", o.Webhook.Addr, "address of the webhook server (HTTPS); \"0\" disables (default \":0\", a free port)")
	fs.StringVar(&o.Webhook.CertDir, "webhook-cert-dir", o.Webhook.CertDir, "directory of tls.crt, tls.key and ca.crt for the webhook server (default: certificates the operator makes)")
	fs.StringVar(&o.Webhook.Mode, "webhook-mode", o.Webhook.Mode, "auto, cluster (a Secret the operator manages) or local (127.0.0.1, self-registered) (default auto: local outside a Pod)")
	fs.BoolVar(&o.Preview.Enabled, "preview", o.Preview.Enabled, "handle every object once with every write sent as a dry run, print what would change and exit: 0 when nothing would, 1 otherwise (default false)")
	fs.StringVar(&o.Preview.Format, "preview-format", o.Preview.Format, "format of the preview's report: yaml or json (default yaml)")
}

func splitNamespaces(s string) []string {
	var out []string
	for _, ns := range strings.Split(s, ",") {
		ns = strings.TrimSpace(ns)
		if ns == "all" || ns == allNamespacesAlias || ns == "" {
			return []string{AllNamespaces}
		}
		out = append(out, ns)
	}
	return out
}
