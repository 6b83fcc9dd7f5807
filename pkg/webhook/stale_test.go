package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/internal/partition"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// createUpdateOnly validates Gizmos on create and update, and has no
// delete check: a webhook.Validator, not a DeleteValidator.
type createUpdateOnly struct{ v gizmoWebhook }

var _ webhook.Validator[*Gizmo] = createUpdateOnly{}

func (c createUpdateOnly) ValidateCreate(ctx context.Context, g *Gizmo) (webhook.Warnings, error) {
	return c.v.ValidateCreate(ctx, g)
}

func (c createUpdateOnly) ValidateUpdate(ctx context.Context, old, g *Gizmo) (webhook.Warnings, error) {
	return c.v.ValidateUpdate(ctx, old, g)
}

// startOperator runs an operator named name with opts and the webhooks
// register adds, and waits until /readyz answers 200. stop ends it.
func startOperator(t *testing.T, name string, wo runtime.WebhookOptions, register func(*runtime.Operator) error) (op *runtime.Operator, stop func()) {
	t.Helper()
	op = newOperator(t, name, wo, register)
	done := runOperator(t, op, &stop)
	waitReady(t, op, done)
	return op, stop
}

func newOperator(t *testing.T, name string, wo runtime.WebhookOptions, register func(*runtime.Operator) error) *runtime.Operator {
	t.Helper()
	op, err := runtime.New(env.Config, runtime.Options{
		Name:           name,
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0",
		Logger:         logr.FromSlogHandler(slog.DiscardHandler),
		Webhook:        wo,
	})
	require.NoError(t, err)
	require.NoError(t, register(op))
	return op
}

// runOperator runs op until *stop is called (or the test ends).
func runOperator(t *testing.T, op *runtime.Operator, stop *func()) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	stopped := false
	*stop = func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	t.Cleanup(*stop)
	return done
}

// readyz returns the operator's /readyz status and body.
func readyz(t *testing.T, op *runtime.Operator) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + op.HealthAddr() + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestDeleteNeedsNoOperatorWithoutADeleteCheck: a Validator without
// ValidateDelete is registered for CREATE and UPDATE only, so with the
// operator down a Gizmo is still deleted, while a create is refused (the
// webhook fails closed). A DeleteValidator is registered for DELETE too,
// and then the deletion waits for the operator.
func TestDeleteNeedsNoOperatorWithoutADeleteCheck(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	gizmos := dynamic.NewForConfigOrDie(env.Config).Resource(gizmosV1).Namespace(ns)
	admission := env.Clientset().AdmissionregistrationV1()
	for _, tc := range []struct {
		name        string
		validator   webhook.Validator[*Gizmo]
		deleteWhile bool // the deletion succeeds while the operator is down
		operations  []admissionregistrationv1.OperationType
	}{
		{"no delete check", createUpdateOnly{}, true, []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}},
		{"a delete check", gizmoWebhook{}, false, []admissionregistrationv1.OperationType{"CREATE", "UPDATE", "DELETE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "deletes-" + rand.String(5)
			cleanupRegistration(t, name)
			_, stop := startOperator(t, name, runtime.WebhookOptions{Mode: runtime.WebhookModeLocal}, func(op *runtime.Operator) error {
				return webhook.Validate(op, gizmoKind, tc.validator)
			})
			v, err := admission.ValidatingWebhookConfigurations().Get(ctx, webhook.ValidatingConfigurationName(name), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, tc.operations, v.Webhooks[0].Rules[0].Operations)
			_, err = gizmos.Create(ctx, unstructuredGizmo(gizmoV1, name, map[string]any{"size": int64(1)}), metav1.CreateOptions{})
			require.NoError(t, err)

			stop()
			_, err = gizmos.Create(ctx, unstructuredGizmo(gizmoV1, name+"-new", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
			require.Error(t, err, "a create still fails closed")
			assert.Contains(t, err.Error(), `failed calling webhook "vgizmo.whtest.opgen.dev"`)
			err = gizmos.Delete(ctx, name, metav1.DeleteOptions{})
			if tc.deleteWhile {
				require.NoError(t, err, "nothing checks a deletion: it needs no operator")
				_, err = gizmos.Get(ctx, name, metav1.GetOptions{})
				assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)
				return
			}
			require.Error(t, err, "a delete check fails closed")
			assert.Contains(t, err.Error(), `failed calling webhook "vgizmo.whtest.opgen.dev"`)
		})
	}
}

// TestStaleRegistrationsAreRemovedLocally: an operator that ran with its
// webhooks in local mode left its configurations behind; started again
// with --webhook-bind-address=0, it removes them before it is ready, so
// the API server no longer calls a webhook nobody serves and writes go
// through.
func TestStaleRegistrationsAreRemovedLocally(t *testing.T) {
	ctx := context.Background()
	name := "stale-" + rand.String(5)
	cleanupRegistration(t, name)
	_, stop := runningOperator(t, name, newStaticSource(t))
	stop()
	ns := env.Namespace(t)
	gizmos := dynamic.NewForConfigOrDie(env.Config).Resource(gizmosV1).Namespace(ns)
	_, err := gizmos.Create(ctx, unstructuredGizmo(gizmoV1, "refused", map[string]any{}), metav1.CreateOptions{})
	require.Error(t, err, "the configurations outlive the operator")

	start := time.Now()
	startOperator(t, name, runtime.WebhookOptions{Mode: runtime.WebhookModeLocal, Addr: "0"}, registerGizmo)
	t.Logf("ready without webhooks, both configurations removed, %v after the start", time.Since(start).Round(time.Millisecond))
	admission := env.Clientset().AdmissionregistrationV1()
	_, err = admission.ValidatingWebhookConfigurations().Get(ctx, webhook.ValidatingConfigurationName(name), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the validating configuration is gone once ready: %v", err)
	_, err = admission.MutatingWebhookConfigurations().Get(ctx, webhook.MutatingConfigurationName(name), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the mutating configuration is gone once ready: %v", err)
	_, err = gizmos.Create(ctx, unstructuredGizmo(gizmoV1, "admitted", map[string]any{}), metav1.CreateOptions{})
	require.NoError(t, err, "no webhook is called any more")
}

// TestStaleRegistrationsFailReadinessInClusterMode: in a cluster the
// manifest owns the configurations. An operator started without its
// webhooks while they exist is not ready, and /readyz names them; once
// they are deleted it is ready.
func TestStaleRegistrationsFailReadinessInClusterMode(t *testing.T) {
	defer webhook.SetRecheck(200 * time.Millisecond)()
	ctx := context.Background()
	name := "cluster-" + rand.String(5)
	ns := env.Namespace(t)
	cleanupRegistration(t, name)
	hs := []webhook.Hook{
		{Type: webhook.Validating, GVK: gizmoHub, Resource: "gizmos", Namespaced: true},
		{Type: webhook.Mutating, GVK: gizmoHub, Resource: "gizmos", Namespaced: true},
	}
	v, m := webhook.Configurations(name, ns, hs, webhook.ServiceClientConfig(name, ns, nil))
	admission := env.Clientset().AdmissionregistrationV1()
	_, err := admission.ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admission.MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{})
	require.NoError(t, err)

	op := newOperator(t, name, runtime.WebhookOptions{Mode: runtime.WebhookModeCluster, Addr: "0"}, registerGizmo)
	var stop func()
	start := time.Now()
	done := runOperator(t, op, &stop)
	var code int
	var body string
	require.Eventually(t, func() bool {
		if op.HealthAddr() == "" || !op.Ready() {
			return false
		}
		code, body = readyz(t, op)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "WebhookConfiguration")
	}, 30*time.Second, 20*time.Millisecond, "the caches synced, and the check found the configurations")
	t.Logf("/readyz 503 naming the stale configurations %v after the start", time.Since(start).Round(time.Millisecond))
	assert.Contains(t, body, "ValidatingWebhookConfiguration "+name+"-validating (vgizmo.whtest.opgen.dev)")
	assert.Contains(t, body, "MutatingWebhookConfiguration "+name+"-mutating (mgizmo.whtest.opgen.dev)")
	assert.Contains(t, body, "--webhook-bind-address=0")
	_, err = admission.ValidatingWebhookConfigurations().Get(ctx, v.Name, metav1.GetOptions{})
	require.NoError(t, err, "cluster mode leaves the manifest's objects alone")

	require.NoError(t, admission.ValidatingWebhookConfigurations().Delete(ctx, v.Name, metav1.DeleteOptions{}))
	require.NoError(t, admission.MutatingWebhookConfigurations().Delete(ctx, m.Name, metav1.DeleteOptions{}))
	deleted := time.Now()
	waitReady(t, op, done)
	t.Logf("ready %v after they were deleted (recheck every 200ms here, 10s by default)", time.Since(deleted).Round(time.Millisecond))
}

// registerGizmo registers the Gizmo webhooks, validating and defaulting.
func registerGizmo(op *runtime.Operator) error {
	if err := webhook.Validate(op, gizmoKind, gizmoWebhook{}); err != nil {
		return err
	}
	return webhook.Default(op, gizmoKind, gizmoWebhook{})
}

// TestLocalRunsKeepEachOthersWebhooks: a second local run of an operator,
// started without webhooks while the first serves them, leaves the first
// one's configurations in place (it once deleted them 35 ms after its
// start, and writes then skipped admission); and the serving run
// registers again when its configurations are deleted.
func TestLocalRunsKeepEachOthersWebhooks(t *testing.T) {
	defer webhook.SetRecheck(200 * time.Millisecond)()
	ctx := context.Background()
	name := "live-" + rand.String(5)
	cleanupRegistration(t, name)
	runningOperator(t, name, newStaticSource(t))
	admission := env.Clientset().AdmissionregistrationV1()
	validating := webhook.ValidatingConfigurationName(name)
	_, err := admission.ValidatingWebhookConfigurations().Get(ctx, validating, metav1.GetOptions{})
	require.NoError(t, err, "the serving run registered its webhooks")

	second := newOperator(t, name, runtime.WebhookOptions{Mode: runtime.WebhookModeLocal, Addr: "0"}, registerGizmo)
	var stop func()
	waitReady(t, second, runOperator(t, second, &stop)) // ready once it checked the configurations
	_, err = admission.ValidatingWebhookConfigurations().Get(ctx, validating, metav1.GetOptions{})
	require.NoError(t, err, "the run without webhooks left the live run's configuration in place")
	_, err = admission.MutatingWebhookConfigurations().Get(ctx, webhook.MutatingConfigurationName(name), metav1.GetOptions{})
	require.NoError(t, err, "the run without webhooks left the live run's configuration in place")
	ns := env.Namespace(t)
	gizmos := dynamic.NewForConfigOrDie(env.Config).Resource(gizmosV1).Namespace(ns)
	_, err = gizmos.Create(ctx, unstructuredGizmo(gizmoV1, "too-big", map[string]any{"size": int64(1000)}), metav1.CreateOptions{})
	require.Error(t, err, "admission still runs")
	stop()

	require.NoError(t, admission.ValidatingWebhookConfigurations().Delete(ctx, validating, metav1.DeleteOptions{}))
	deleted := time.Now()
	require.Eventually(t, func() bool {
		_, err := admission.ValidatingWebhookConfigurations().Get(ctx, validating, metav1.GetOptions{})
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the serving run registers its deleted configuration again")
	t.Logf("registered again %v after the deletion (recheck every 200ms here, 10s by default)", time.Since(deleted).Round(time.Millisecond))
}

// TestReadyAtOnceAfterAnOutage: an operator that starts while the API
// server is unreachable (runtime.Main runs it again after a lost lease,
// during the outage) is ready within a couple of seconds of the server's
// return. Its check of the webhook configurations, which readiness waits
// for, backed off to 10s during the outage and held /readyz at 503 for
// about 7s after it.
func TestReadyAtOnceAfterAnOutage(t *testing.T) {
	t.Parallel()
	name := "outage-" + rand.String(5)
	cleanupRegistration(t, name)
	u, err := url.Parse(env.Config.Host)
	require.NoError(t, err)
	p, err := partition.New(u.Host)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	cfg := rest.CopyConfig(env.Config)
	cfg.Host, cfg.Timeout = "https://"+p.Addr(), time.Second
	p.Cut()
	op, err := runtime.New(cfg, runtime.Options{
		Name:           name,
		HealthAddr:     "127.0.0.1:0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0",
		Logger:         logr.FromSlogHandler(slog.DiscardHandler),
		Webhook:        runtime.WebhookOptions{Mode: runtime.WebhookModeLocal, Addr: "0"},
	})
	require.NoError(t, err)
	require.NoError(t, registerGizmo(op))
	var stop func()
	done := runOperator(t, op, &stop)
	// Long enough for a backoff from 200ms, doubling after each failed
	// check (a second each), to reach its 10s cap.
	outage := 35 * time.Second
	t.Logf("the API server is unreachable for %s from the operator's start", outage)
	time.Sleep(outage)
	p.Restore()
	back := time.Now()
	waitReady(t, op, done)
	took := time.Since(back)
	t.Logf("ready %v after the API server came back", took.Round(time.Millisecond))
	assert.Less(t, took, 3*time.Second, "ready within a few seconds of the API server's return")
}

// TestRegistrationCheckSurvivesAForbiddenStart: an operator whose user may
// not read its webhook configurations at first (a starting API server's
// authorizer, or a role granted late) keeps checking. While refused,
// /readyz passes but names the missing permission and the denied checks
// are counted; once the role grants get, the next check finds a stale
// configuration. The check once took the first Forbidden as its last word.
func TestRegistrationCheckSurvivesAForbiddenStart(t *testing.T) {
	defer webhook.SetRecheck(200 * time.Millisecond)()
	defer webhook.SetDeniedRetry(300 * time.Millisecond)()
	ctx := context.Background()
	name := "denied-" + rand.String(5)
	user := "opgen-webhook-test-" + name
	ns := env.Namespace(t)
	cleanupRegistration(t, name)
	hs := []webhook.Hook{{Type: webhook.Validating, GVK: gizmoHub, Resource: "gizmos", Namespaced: true}}
	v, _ := webhook.Configurations(name, ns, hs, webhook.ServiceClientConfig(name, ns, nil))
	admission := env.Clientset().AdmissionregistrationV1()
	_, err := admission.ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{})
	require.NoError(t, err)

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	op, err := runtime.New(cfg, runtime.Options{
		Name:           name,
		HealthAddr:     "127.0.0.1:0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0",
		Logger:         logr.FromSlogHandler(slog.DiscardHandler),
		Webhook:        runtime.WebhookOptions{Mode: runtime.WebhookModeCluster, Addr: "0"},
	})
	require.NoError(t, err)
	require.NoError(t, registerGizmo(op))
	var stop func()
	done := runOperator(t, op, &stop)
	waitReady(t, op, done)
	code, body := readyz(t, op)
	assert.Equal(t, http.StatusOK, code, "a check that cannot read the configurations does not hold readiness")
	assert.Contains(t, body, "grant get on validatingwebhookconfigurations", "/readyz names the missing permission")
	require.Eventually(t, func() bool { return checks(t, op, "denied") >= 3 }, 10*time.Second, 50*time.Millisecond, "refused checks are retried and counted")

	rbac := env.Clientset().RbacV1()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"},
			Verbs:     []string{"get"},
		}},
	}
	_, err = rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{}) })
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	_, err = rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{}) })
	granted := time.Now()
	require.Eventually(t, func() bool {
		code, body = readyz(t, op)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "ValidatingWebhookConfiguration "+name+"-validating")
	}, 30*time.Second, 50*time.Millisecond, "waiting for the check, granted get, to find the stale configuration")
	t.Logf("the stale configuration failed readiness %v after the role granted get (denied checks retried every 300ms here, a minute by default)", time.Since(granted).Round(time.Millisecond))
	assert.GreaterOrEqual(t, checks(t, op, "stale"), 1.0)
}

// checks is opgen_webhook_configuration_checks_total{result} of op.
func checks(t *testing.T, op *runtime.Operator, result string) float64 {
	t.Helper()
	families, err := op.Registry().Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "opgen_webhook_configuration_checks_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
