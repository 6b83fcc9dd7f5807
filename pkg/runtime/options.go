package runtime

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/internal/osenv"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
)

// Environment variables New reads when the matching option is unset.
const (
	// EnvWatchNamespace, OPGEN_WATCH_NAMESPACE, lists the namespaces to
	// watch, comma-separated, or "all".
	EnvWatchNamespace = osenv.WatchNamespace
	// EnvPodNamespace, OPGEN_POD_NAMESPACE, is the operator's own
	// namespace, where the leader election Lease lives; set it from the
	// downward API (fieldRef: metadata.namespace).
	EnvPodNamespace = osenv.PodNamespace
)

// AllNamespaces in Options.Namespaces (or "all" in flags and environment)
// means every namespace.
const AllNamespaces = metav1.NamespaceAll

// allNamespacesAlias spells every namespace as operators ported from
// Bonny do (docs/parity.md). It is accepted wherever "all" is.
const allNamespacesAlias = "__ALL__"

// Options configure an Operator. The zero value is usable once Name is set;
// each field documents its default. Precedence: a flag bound with
// BindFlags and given on the command line, then the field as set, then the
// environment variable, then the default.
type Options struct {
	// Name is the operator's name: the server-side apply field manager,
	// the value of the app.kubernetes.io/managed-by label on owned objects,
	// the reporting controller of Events and the default lease name.
	// Required.
	Name string

	// Cluster names the cluster the operator works in, when one process
	// works in several (package fleet, which sets it): actions carry it
	// (plug.Action.Cluster). Default "", an operator of one cluster.
	Cluster string

	// Namespaces are the namespaces watched. Empty means the value of
	// OPGEN_WATCH_NAMESPACE, and all namespaces when that is unset or
	// "all". Cluster-scoped kinds are always watched cluster-wide.
	Namespaces []string

	// LeaderElection configures leader election; it is on by default.
	LeaderElection LeaderElectionOptions

	// Sharding spreads every controller's objects over the replicas
	// instead of one leader handling all (see Sharding in the package
	// documentation): each replica holds a membership Lease, the leader
	// labels each object with its bucket (a hash of its key) and assigns
	// the buckets to the live members by consistent hashing, and each
	// member caches and handles only the objects of its buckets. Runnables (the scheduler, periodic tasks)
	// stay on the leader. Needs leader election. Default off.
	Sharding bool

	// MetricsAddr is where /metrics is served. Default ":0", a free port,
	// so that a port another process holds never stops the operator; Run
	// logs the address it chose (see also Operator.MetricsAddr). The
	// generated manifest passes the port its container declares
	// (--metrics-bind-address=:8443). "0" disables it.
	MetricsAddr string

	// MetricsInsecure serves /metrics over plain HTTP to anyone who
	// reaches it (--metrics-secure=false). Default false: /metrics is
	// served over HTTPS and answers only a request whose bearer token the
	// API server authenticates (TokenReview) and authorizes to get the
	// non-resource URL /metrics (SubjectAccessReview), as
	// kube-controller-manager's and controller-runtime's secure metrics
	// do; the operator then needs create on tokenreviews and
	// subjectaccessreviews, which the generated manifest grants. See
	// docs/metrics.md.
	MetricsInsecure bool

	// MetricsCertDir holds tls.crt and tls.key, the certificate /metrics
	// is served with over HTTPS (reloaded when they change, as when
	// cert-manager renews them). Default "": a self-signed certificate
	// made at start, which scrapers accept with insecureSkipVerify (the
	// bearer token, not the certificate, is what is checked).
	MetricsCertDir string

	// HealthAddr is where /healthz and /readyz are served. Default ":0",
	// as for MetricsAddr; the generated manifest passes
	// --health-probe-bind-address=:8081. "0" disables it. When equal to
	// MetricsAddr and MetricsInsecure, one server serves all three; secure
	// metrics need an address of their own (two ":0" are two free ports).
	HealthAddr string
	// StuckHandlersFailReady fails /readyz while a handler is stuck past
	// its ActionTimeout (ControllerOptions.ActionTimeout). Default false:
	// /readyz shows them as degraded, and opgen_reconcile_stuck counts them.
	StuckHandlersFailReady bool

	// PprofAddr, when set, serves net/http/pprof (/debug/pprof/) on its
	// own listener at this address; see Operator.PprofAddr. Default "",
	// off: profiles expose internals, so bind it to localhost or reach it
	// with kubectl port-forward. "0" also means off.
	PprofAddr string

	// ShutdownTimeout bounds how long in-flight handlers may run after
	// the context given to Run is cancelled; then their contexts are
	// cancelled. Default 30s.
	ShutdownTimeout time.Duration

	// Workers is the default number of workers per controller
	// (ControllerOptions.Workers overrides it). Default 2.
	Workers int

	// KubeAPIQPS and KubeAPIBurst limit the requests of each client the
	// operator builds (client-go's token bucket: a sustained rate and the
	// burst above it). Default: the REST config's QPS and Burst, and when
	// it sets none DefaultKubeAPIQPS and DefaultKubeAPIBurst. A negative
	// KubeAPIQPS turns the limit off (the API server's priority and
	// fairness still applies).
	KubeAPIQPS   float32
	KubeAPIBurst int

	// KeepManagedFields keeps metadata.managedFields in the caches. By
	// default every entry but the operator's own server-side apply is
	// stripped: they are often half of an object's size and no handler
	// needs them; the operator's entry tells whether someone changed a
	// field of an owned object the operator applied.
	KeepManagedFields bool

	// Logger receives the operator's logs. Default: a logr over a
	// log/slog text handler on stderr at Info level. logr.Discard() is the
	// zero Logger and so means the default; to silence the operator pass
	// logr.FromSlogHandler(slog.DiscardHandler).
	Logger logr.Logger

	// LogFormat is the default Logger's format: "text" (log/slog's
	// key=value lines) or "json" (one JSON object a line). Default "text".
	// Ignored when Logger is set.
	LogFormat string

	// Verbosity is the default Logger's level: logr's V(n) lines with n up
	// to Verbosity are written. Default 0 (V(1) lines, such as the Logger
	// step's "handled", are dropped). Ignored when Logger is set.
	Verbosity int

	// LogOutput receives the default Logger's lines. Default os.Stderr.
	// Ignored when Logger is set.
	LogOutput io.Writer

	// Clock drives the work queues (backoff, requeue after, periodic
	// reconcile) and leader election. Default: the real clock. Tests inject
	// k8s.io/utils/clock/testing.FakeClock to step time.
	Clock clock.WithTicker

	// TracerProvider, when set, traces every action with OpenTelemetry: a
	// span "opgen.reconcile" per action with a child span "opgen.step
	// <name>" per pipeline step (nested as the steps are). Default: nil,
	// no tracing and no cost.
	TracerProvider trace.TracerProvider

	// SkipStorageMigration turns off the leader's migration of stored
	// objects (--migrate-storage=false). By default, when the CRD of a
	// kind with a controller lists stored versions other than its storage
	// version, the leader writes its objects again in the storage version
	// (through a StorageVersionMigration where the API server serves them)
	// and then trims status.storedVersions, so that an older version can
	// be removed from the CRD. See docs/upgrading.md.
	SkipStorageMigration bool

	// Webhook configures the webhook server of the kinds that register
	// admission or conversion webhooks (package webhook); see
	// WebhookOptions for the defaults.
	Webhook WebhookOptions

	// Preview runs the operator once as a dry run instead of for good
	// (--preview): see PreviewOptions. Default off.
	Preview PreviewOptions
}

// LeaderElectionOptions configure leader election with a
// coordination.k8s.io Lease.
type LeaderElectionOptions struct {
	// Disabled turns leader election off: every replica works. Only for
	// local runs and single-replica tests.
	Disabled bool
	// Namespace holds the Lease. Default: OPGEN_POD_NAMESPACE, then the
	// in-cluster service-account namespace, then (a local run) the current
	// kubeconfig context's namespace, which New logs; New fails when none
	// is known and election is on.
	Namespace string
	// fromKubeconfig: Namespace came from the kubeconfig (logged).
	fromKubeconfig bool
	// LeaseName names the Lease. Default: Options.Name.
	LeaseName string
	// Identity identifies this replica. Default: the hostname plus a
	// random suffix.
	Identity string
	// LeaseDuration is how long a lease holds without renewal; a standby
	// takes over after it when the leader crashed. Default 15s.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it
	// stops working and Run returns an error. Must be below
	// LeaseDuration. Default 10s.
	RenewDeadline time.Duration
	// RetryPeriod is the pause between renewals and between tries to
	// acquire. Default 2s.
	RetryPeriod time.Duration
	// Elected, with Disabled, hands leader election to another part of
	// the process, such as the controller-runtime manager that hosts the
	// operator (package ctrlbridge): the caches fill at once, and the
	// workers and leader Runnables start when Elected is closed. Default
	// nil: with Disabled, every replica works.
	Elected <-chan struct{}
}

const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// complete returns o with defaults and environment applied, or an error
// that says which field to fix.
func (o Options) complete() (Options, error) {
	if o.Name == "" {
		return o, errors.New("runtime.New: set Options.Name to the operator's name, such as \"hello-operator\"; it is the field manager, the managed-by label and the lease name")
	}
	if len(o.Namespaces) == 0 {
		o.Namespaces = splitNamespaces(os.Getenv(EnvWatchNamespace))
	}
	o, err := o.Preview.complete(o)
	if err != nil {
		return o, err
	}
	if len(o.Namespaces) > 0 {
		for _, ns := range o.Namespaces {
			if ns == AllNamespaces || ns == allNamespacesAlias {
				o.Namespaces = []string{AllNamespaces}
				break
			}
		}
	}
	// Never a fixed port by default: the generated manifest passes the
	// ports its container declares as flags.
	o.MetricsAddr = orDefault(o.MetricsAddr, ":0")
	o.HealthAddr = orDefault(o.HealthAddr, ":0")
	if err := o.checkMetricsAddr(); err != nil {
		return o, err
	}
	webhook, err := o.Webhook.complete()
	if err != nil {
		return o, err
	}
	o.Webhook = webhook
	o.ShutdownTimeout = orDefault(o.ShutdownTimeout, 30*time.Second)
	o.Workers = orDefault(o.Workers, 2)
	if o.KubeAPIBurst < 0 {
		return o, fmt.Errorf("runtime.New: Options.KubeAPIBurst (--kube-api-burst) is %d; use a positive number, or 0 for the default", o.KubeAPIBurst)
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("runtime.New: Options.Workers is %d; use a positive number, or 0 for the default 2", o.Workers)
	}
	if o.Logger.IsZero() {
		logger, err := defaultLogger(o.LogFormat, o.Verbosity, o.LogOutput)
		if err != nil {
			return o, err
		}
		o.Logger = logger
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Sharding && o.LeaderElection.Disabled {
		return o, errors.New("runtime.New: Options.Sharding (--sharding) needs leader election: the leader assigns the objects to the replicas; turn election on (--leader-elect=true), or sharding off")
	}
	le, err := o.LeaderElection.complete(o.Name)
	o.LeaderElection = le
	if err == nil && le.fromKubeconfig {
		o.Logger.Info("no pod namespace: the leader election Lease lives in the kubeconfig's current namespace; set "+EnvPodNamespace+" to choose another", "namespace", le.Namespace)
	}
	return o, err
}

func (le LeaderElectionOptions) complete(name string) (LeaderElectionOptions, error) {
	le.LeaseName = orDefault(le.LeaseName, name)
	le.LeaseDuration = orDefault(le.LeaseDuration, 15*time.Second)
	le.RenewDeadline = orDefault(le.RenewDeadline, 10*time.Second)
	le.RetryPeriod = orDefault(le.RetryPeriod, 2*time.Second)
	if le.Identity == "" {
		host, _ := os.Hostname()
		le.Identity = host + "_" + randomSuffix()
	}
	if le.Disabled {
		return le, nil
	}
	if le.Namespace == "" {
		le.Namespace = os.Getenv(EnvPodNamespace)
	}
	if le.Namespace == "" {
		if data, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
			le.Namespace = strings.TrimSpace(string(data))
		}
	}
	if le.Namespace == "" {
		le.Namespace, le.fromKubeconfig = kubeconfigNamespace()
	}
	if le.Namespace == "" {
		return le, fmt.Errorf("runtime.New: no namespace for the leader election Lease: set %s (in a Pod, from the downward API fieldRef metadata.namespace) or Options.LeaderElection.Namespace, or turn election off with --leader-elect=false for a local run", EnvPodNamespace)
	}
	if le.LeaseDuration <= le.RenewDeadline {
		return le, fmt.Errorf("runtime.New: Options.LeaderElection.LeaseDuration (%s) must be greater than RenewDeadline (%s), or a standby could take over while the leader still works", le.LeaseDuration, le.RenewDeadline)
	}
	if le.RenewDeadline <= le.RetryPeriod {
		return le, fmt.Errorf("runtime.New: Options.LeaderElection.RenewDeadline (%s) must be greater than RetryPeriod (%s), or a single failed renewal loses the lease", le.RenewDeadline, le.RetryPeriod)
	}
	return le, nil
}

// defaultLogger is a logr over a log/slog handler of the format, writing
// V(n) lines up to verbosity to out (default os.Stderr).
func defaultLogger(format string, verbosity int, out io.Writer) (logr.Logger, error) {
	if out == nil {
		out = os.Stderr
	}
	if verbosity < 0 {
		return logr.Logger{}, fmt.Errorf("runtime.New: Options.Verbosity (-v) is %d; use 0 or more", verbosity)
	}
	// logr's V(n) is slog level -n (logr.FromSlogHandler).
	ho := &slog.HandlerOptions{Level: slog.Level(-verbosity)}
	switch format {
	case "", "text":
		return logr.FromSlogHandler(slog.NewTextHandler(out, ho)), nil
	case "json":
		return logr.FromSlogHandler(slog.NewJSONHandler(out, ho)), nil
	}
	return logr.Logger{}, fmt.Errorf("runtime.New: Options.LogFormat (--log-format) is %q; use \"text\" or \"json\"", format)
}

func orDefault[V comparable](v, def V) V {
	var zero V
	if v == zero {
		return def
	}
	return v
}

// checkMetricsAddr rejects one fixed address for secure metrics and the
// health probes: the probes are plain HTTP, the metrics HTTPS.
func (o Options) checkMetricsAddr() error {
	if o.MetricsInsecure || o.MetricsAddr != o.HealthAddr || o.MetricsAddr == "0" {
		return nil
	}
	if _, port, err := net.SplitHostPort(o.MetricsAddr); err == nil && port == "0" {
		return nil // two free ports
	}
	return fmt.Errorf("runtime.New: Options.MetricsAddr and HealthAddr are both %q, but secure metrics are served over HTTPS and the health probes over HTTP: give them different addresses (--metrics-bind-address, --health-probe-bind-address), or serve plain metrics with --metrics-secure=false (Options.MetricsInsecure)", o.MetricsAddr)
}

// watchesAll reports whether the operator watches every namespace.
func (o Options) watchesAll() bool {
	return len(o.Namespaces) == 1 && o.Namespaces[0] == AllNamespaces
}

// namespaces returns the namespaces to run a kind's informers in.
func (o Options) namespaces(namespaced bool) []string {
	if !namespaced || o.watchesAll() {
		return []string{AllNamespaces}
	}
	return o.Namespaces
}

// transform is the transform of every cache: cachefill.Trim with project
// (nil but for a controller's own kind), or project alone with
// KeepManagedFields.
func (o Options) transform(project func(any)) cache.TransformFunc {
	if o.KeepManagedFields {
		if project == nil {
			return nil
		}
		return func(obj any) (any, error) { project(obj); return obj, nil }
	}
	return func(obj any) (any, error) { return cachefill.Trim(obj, o.Name, false, project) }
}

// transformOwned is the transform of the metadata-only caches of owned
// and watched kinds: of the operator's own managedFields entry they keep
// only the hash of its field set and of the declaration, which is all the
// store of owned objects reads.
func (o Options) transformOwned() cache.TransformFunc {
	if o.KeepManagedFields {
		return nil
	}
	return func(obj any) (any, error) { return cachefill.TrimOwned(obj, o.Name, plug.AppliedHashAnnotation) }
}
