// Package manifest writes an operator's whole deployment manifest: the CRDs
// and RBAC that `opgen generate` wrote under config/, plus the objects that
// run the operator in a cluster.
//
// # Flow
//
// Build reads config/crd (every CustomResourceDefinition), config/rbac/role.yaml
// (the ClusterRole the controllers need) and config/rbac/leader_election_role.yaml
// (the Role for the leader-election Lease), and returns, in apply order: the
// Namespace, the CRDs, a ServiceAccount, the ClusterRole and its binding, the
// leader-election Role and its binding and, when an image is given, the
// operator's Deployment.
//
// # Guarantees
//
//   - Output is deterministic: same inputs, same bytes.
//   - The Pod's termination grace period is the shutdown timeout plus
//     ShutdownMargin, so the kubelet lets a shutdown run its course.
//   - With webhooks, two replicas and a PodDisruptionBudget by default
//     (webhook.go).
//   - The Deployment runs as non-root with a read-only root filesystem, all
//     capabilities dropped, no privilege escalation and the RuntimeDefault
//     seccomp profile; it has resource requests and limits and liveness and
//     readiness probes on the runtime's health endpoints; it passes the
//     watched namespace and its own namespace by environment.
//   - Without an image the Deployment is left out, for running the operator
//     outside the cluster against the same RBAC.
//
// # Caveats
//
// The RBAC is what config/rbac says: run `go generate ./...` first.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// DefaultShutdownTimeout is the runtime's --shutdown-timeout default.
const DefaultShutdownTimeout = 30 * time.Second

// ShutdownMargin is what the Pod's termination grace period adds to the
// shutdown timeout. After the timeout, the runtime waits 2 s for handlers
// to return, releases its Lease and stops its HTTP servers, up to 5 s
// each; with the default 30 s timeout a stuck handler's shutdown took
// 32.1 s. The kubelet kills the process at the end of the grace period,
// before it logs which handlers were stuck when the margin is too short.
const ShutdownMargin = 15 * time.Second

// Ports of the operator container. The container's arguments pass them
// to the runtime, whose defaults bind no fixed port.
const (
	HealthPort  = 8081
	MetricsPort = 8443
)

// Options say what to write. Name, Namespace and ConfigDir are required.
type Options struct {
	// Name of the operator: the ServiceAccount, bindings and Deployment.
	Name string
	// Namespace the operator runs in.
	Namespace string
	// Image of the operator; empty leaves the Deployment out. A reference
	// by digest (name:tag@sha256:..., as opgen image prints it) is kept
	// whole, so that the Deployment runs exactly what was built.
	Image string
	// WatchNamespace is "all" (the default) or a comma-separated list.
	WatchNamespace string
	// Replicas of the Deployment. Default 1, or 2 when the operator
	// serves webhooks (webhook.go): every replica serves them, so one
	// replica's restart or eviction does not refuse the writes they
	// guard; or 2 with Sharding, whose point is more than one replica.
	// More replicas stand by for leader election, or, with Sharding,
	// each handle their share of the objects.
	Replicas int32
	// Sharding passes --sharding: every replica caches and handles its
	// share of the objects (docs/sharding.md). It needs leader election.
	Sharding bool
	// ExtraArgs are passed to the operator after the arguments the
	// manifest sets, such as --workers=8 or --kube-api-qps=50; an
	// argument of a flag the manifest sets too wins, being last. Each
	// starts with "-".
	ExtraArgs []string
	// ShutdownTimeout is how long in-flight handlers may run after
	// SIGTERM (the operator's --shutdown-timeout), in whole seconds.
	// Default 30s, the runtime's. The Pod's terminationGracePeriodSeconds
	// is this plus ShutdownMargin.
	ShutdownTimeout time.Duration
	// Labels are added to every object.
	Labels map[string]string
	// ServiceAccount the operator runs as. Default: Name.
	ServiceAccount string
	// Resources of the operator's container. Each request and limit
	// that is set replaces its default: requests 10m CPU and 64Mi of
	// memory, limits 500m CPU and 256Mi.
	Resources corev1.ResourceRequirements
	// NoLeaderElection passes --leader-elect=false: for one replica that
	// need not wait for a Lease. Default: the runtime elects a leader.
	NoLeaderElection bool
	// LogFormat is passed as --log-format when set: text or json.
	LogFormat string
	// Verbosity is passed as -v when above 0.
	Verbosity int
	// ConfigDir holds crd/ and rbac/ as written by `opgen generate`.
	ConfigDir string
	// MetricsInsecure serves the operator's metrics over plain HTTP to
	// anyone (--metrics-secure=false). Default false: HTTPS, to
	// ServiceAccounts bound to <name>-metrics-reader (see metrics.go).
	MetricsInsecure bool
	// ServiceMonitor adds a Prometheus Operator ServiceMonitor of the
	// metrics Service. Needs Image.
	ServiceMonitor bool
	// CertManager has cert-manager issue the webhook server's certificate
	// and inject its CA, when the operator serves webhooks (see
	// webhook.go). Default: the runtime manages both itself.
	CertManager bool
	// Member writes the manifest of a member cluster of a fleet (package
	// pkg/runtime/fleet) instead: the Namespace, the CRDs (without a
	// conversion webhook), the ServiceAccount, the ClusterRole of the
	// controllers and its binding, and a token Secret of the
	// ServiceAccount (MemberTokenSecret), whose token the home cluster's
	// kubeconfig of the member uses. The operator runs elsewhere, so the
	// leader-election Role, metrics, webhooks and Deployment are left out.
	Member bool
}

// builder builds one manifest: Options with their defaults, and what it
// read from ConfigDir. Its methods are over the files of the package,
// each file what it builds.
type builder struct {
	Options
	// wh are the webhooks the operator serves, read from ConfigDir.
	wh webhooks
}

// newBuilder checks opts and fills in their defaults.
func newBuilder(opts Options) (*builder, error) {
	b := &builder{Options: opts}
	return b, b.validate()
}

// Build returns the manifest as multi-document YAML.
func Build(opts Options) ([]byte, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	objects, err := b.objects()
	if err != nil {
		return nil, err
	}
	return MarshalDocuments(objects)
}

func (o *builder) validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("manifest: the operator name is empty: pass --name"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("manifest: the namespace is empty: pass --namespace"))
	}
	if o.ConfigDir == "" {
		errs = append(errs, errors.New("manifest: the config directory is empty: pass --config-dir"))
	}
	if o.WatchNamespace == "" {
		o.WatchNamespace = "all"
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.ShutdownTimeout < time.Second || o.ShutdownTimeout%time.Second != 0 {
		errs = append(errs, fmt.Errorf("manifest: the shutdown timeout %s is not a whole number of seconds: pass one such as 30s", o.ShutdownTimeout))
	}
	if o.ServiceAccount == "" {
		o.ServiceAccount = o.Name
	}
	if o.LogFormat != "" && o.LogFormat != "text" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("manifest: log format %q is neither text nor json: pass --log-format text or json", o.LogFormat))
	}
	if o.Sharding && o.NoLeaderElection {
		errs = append(errs, errors.New("manifest: sharding needs leader election, whose leader assigns the objects to the replicas: leave --leader-elect=false out, or --sharding"))
	}
	for _, a := range o.ExtraArgs {
		if !strings.HasPrefix(a, "-") {
			errs = append(errs, fmt.Errorf("manifest: the extra argument %q is not a flag: pass it whole, such as --arg=--workers=8", a))
		}
	}
	errs = append(errs, o.validateMetrics(), o.validateImage())
	return errors.Join(errs...)
}

func (o *builder) objects() ([]any, error) {
	crds, err := readCRDs(filepath.Join(o.ConfigDir, "crd"))
	if err != nil {
		return nil, err
	}
	clusterRole := &rbacv1.ClusterRole{}
	if err := readYAML(filepath.Join(o.ConfigDir, "rbac", "role.yaml"), clusterRole); err != nil {
		return nil, err
	}
	o.label(&clusterRole.ObjectMeta)
	if o.Member {
		return o.memberObjects(crds, clusterRole), nil
	}
	leaderRole := &rbacv1.Role{}
	if err := readYAML(filepath.Join(o.ConfigDir, "rbac", "leader_election_role.yaml"), leaderRole); err != nil {
		return nil, err
	}
	leaderRole.Namespace = o.Namespace
	if o.wh, err = readWebhooks(o.ConfigDir, crds); err != nil {
		return nil, err
	}

	objects := []any{o.namespace()}
	for _, crd := range crds {
		o.webhookCRD(crd)
		objects = append(objects, o.labelUnstructured(crd))
	}
	o.label(&leaderRole.ObjectMeta)
	objects = append(objects,
		o.serviceAccount(),
		clusterRole, o.clusterRoleBinding(clusterRole.Name),
		leaderRole, o.roleBinding(leaderRole.Name),
	)
	if o.Sharding {
		objects = append(objects, o.shardingObjects(crds, clusterRole)...)
	}
	objects = append(objects, o.metricsObjects()...)
	objects = append(objects, o.webhookObjects()...)
	if o.Image != "" {
		objects = append(objects, o.deployment())
	}
	return objects, nil
}

func (o *builder) meta(name string, namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name}
	if namespaced {
		m.Namespace = o.Namespace
	}
	o.label(&m)
	return m
}

func (o *builder) label(m *metav1.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels["app.kubernetes.io/name"] = o.Name
	m.Labels["app.kubernetes.io/managed-by"] = "opgen"
	for k, v := range o.Labels {
		m.Labels[k] = v
	}
}

func (o *builder) namespace() *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: o.meta(o.Namespace, false),
	}
}

func (o *builder) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: o.meta(o.ServiceAccount, true),
	}
}

func (o *builder) subjects() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: o.ServiceAccount, Namespace: o.Namespace}}
}

func (o *builder) clusterRoleBinding(role string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: o.meta(role, false),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   o.subjects(),
	}
}

func (o *builder) roleBinding(role string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: o.meta(role, true),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   o.subjects(),
	}
}

func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("manifest: %w; run `go generate ./...` to write config/rbac", err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("manifest: %s: %w", path, err)
	}
	return nil
}

// marshal writes obj as YAML without the empty fields that typed objects
// always carry: null values (creationTimestamp: null) and an empty top-level
// status. Other empty maps stay; some mean something (subresources.status).
func marshal(obj any) ([]byte, error) {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	dropNulls(m)
	if s, ok := m["status"].(map[string]any); ok && len(s) == 0 {
		delete(m, "status")
	}
	return yaml.Marshal(m)
}

func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if item == nil {
				delete(v, k)
				continue
			}
			dropNulls(item)
		}
	case []any:
		for _, item := range v {
			dropNulls(item)
		}
	}
}

// readCRDs returns the CustomResourceDefinition documents under dir, in path
// order, as generic maps so that nothing in them is lost. An operator of
// built-in kinds only has none.
func readCRDs(dir string) ([]map[string]any, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var crds []map[string]any
	for _, path := range paths {
		in, err := readCRDFile(path)
		if err != nil {
			return nil, err
		}
		crds = append(crds, in...)
	}
	return crds, nil
}

// readCRDFile returns the CustomResourceDefinition documents of one file.
func readCRDFile(path string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var crds []map[string]any
	for i, doc := range bytes.Split(data, []byte("\n---")) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("manifest: %s: document %d: %w", path, i+1, err)
		}
		if m["kind"] == "CustomResourceDefinition" {
			crds = append(crds, m)
		}
	}
	return crds, nil
}

func (o *builder) labelUnstructured(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	var m metav1.ObjectMeta
	if labels, ok := meta["labels"].(map[string]any); ok {
		m.Labels = map[string]string{}
		for k, v := range labels {
			m.Labels[k] = fmt.Sprint(v)
		}
	}
	o.label(&m)
	labels := map[string]any{}
	for k, v := range m.Labels {
		labels[k] = v
	}
	meta["labels"] = labels
	return obj
}

// ParseLabels parses "k=v,k2=v2".
func ParseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label %q is not key=value: write labels as k=v,k2=v2", kv)
		}
		labels[k] = v
	}
	return labels, nil
}
