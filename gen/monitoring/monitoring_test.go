//lint:file-ignore SA1019 the dashboards are Grafana's classic JSON model on purpose: see dashboardOf

package monitoring_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/monitoring"
)

func init() { plugins.RegisterDefaultPlugins() } // the panels' and queries' types, for unmarshalling

func options() monitoring.Options {
	return monitoring.Options{Name: "widget-operator", Namespace: "widget-system", Webhooks: true}
}

// TestDashboardReadsBackIntoTheSDKType: the JSON is a dashboard of the
// SDK's schema: read into the SDK's Dashboard type, it passes Validate
// and marshals to the same JSON, so no field was unknown to the type.
// (The SDK's UnmarshalJSONStrict loses nested panels in v0.0.22: it
// returns an empty error list, which a caller one level up takes as a
// failure and drops the panel.)
func TestDashboardReadsBackIntoTheSDKType(t *testing.T) {
	t.Parallel()
	data, err := monitoring.Dashboard(options())
	require.NoError(t, err)
	var d dashboard.Dashboard
	require.NoError(t, json.Unmarshal(data, &d))
	require.NoError(t, sdkErr(d.Validate()))
	again, err := json.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again))
	assert.Equal(t, "opgen-widget-operator", *d.Uid)
}

// sdkErr is err, or nil for an empty cog.BuildErrors: the SDK returns its
// error list even when it holds no error.
func sdkErr(err error) error {
	var list cog.BuildErrors
	if errors.As(err, &list) && len(list) == 0 {
		return nil
	}
	return err
}

// exprs returns the PromQL of every panel of the dashboard, by title.
func exprs(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	var d dashboard.Dashboard
	require.NoError(t, json.Unmarshal(data, &d))
	out := map[string][]string{}
	add := func(p dashboard.Panel) {
		for _, target := range p.Targets {
			q, ok := target.(*prometheus.Dataquery)
			require.True(t, ok, "panel %q: a Prometheus query, not %T", *p.Title, target)
			out[*p.Title] = append(out[*p.Title], q.Expr)
		}
	}
	for _, p := range d.Panels {
		if p.Panel != nil {
			add(*p.Panel)
		}
		if p.RowPanel != nil {
			for _, inner := range p.RowPanel.Panels {
				add(inner)
			}
		}
	}
	return out
}

// TestDashboardFollowsTheOptions: the webhook row is there only for an
// operator with webhooks; the stuck threshold follows the action timeout;
// every query selects the job.
func TestDashboardFollowsTheOptions(t *testing.T) {
	t.Parallel()
	opts := options()
	opts.ActionTimeout = time.Minute
	with, err := monitoring.Dashboard(opts)
	require.NoError(t, err)
	opts.Webhooks = false
	without, err := monitoring.Dashboard(opts)
	require.NoError(t, err)
	assert.Contains(t, exprs(t, with), "Requests by result")
	assert.NotContains(t, exprs(t, without), "Requests by result")
	assert.Contains(t, string(with), "Past 1m6s (ActionTimeout and its grace)")
	for title, list := range exprs(t, with) {
		for _, e := range list {
			assert.Contains(t, e, `job=~"$job"`, "panel %q", title)
		}
	}
	again, err := monitoring.Dashboard(opts)
	require.NoError(t, err)
	assert.Equal(t, without, again, "deterministic")
}

type rule struct {
	Alert, Expr, For    string
	Labels, Annotations map[string]string
}

func rulesOf(t *testing.T, opts monitoring.Options) []rule {
	t.Helper()
	data, err := monitoring.Rules(opts)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), monitoring.RulesHeader))
	var doc struct {
		APIVersion, Kind string
		Metadata         struct {
			Name, Namespace string
			Labels          map[string]string
		}
		Spec struct {
			Groups []struct {
				Name  string
				Rules []rule
			}
		}
	}
	require.NoError(t, yaml.UnmarshalStrict(data, &doc, yaml.DisallowUnknownFields))
	assert.Equal(t, "monitoring.coreos.com/v1", doc.APIVersion)
	assert.Equal(t, "PrometheusRule", doc.Kind)
	assert.Equal(t, opts.Namespace, doc.Metadata.Namespace)
	require.Len(t, doc.Spec.Groups, 1)
	return doc.Spec.Groups[0].Rules
}

// TestRulesCoverTheFailureModes: one alert per failure mode the runtime's
// metrics show, each on the operator's job; the certificate alert only
// with webhooks.
func TestRulesCoverTheFailureModes(t *testing.T) {
	t.Parallel()
	names := func(rules []rule) []string {
		var out []string
		for _, r := range rules {
			out = append(out, r.Alert)
			assert.Contains(t, r.Expr, `job="widget-operator-metrics"`, r.Alert)
			assert.NotEmpty(t, r.For, r.Alert)
			assert.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], r.Alert)
		}
		return out
	}
	with := names(rulesOf(t, options()))
	for _, want := range []string{"OpgenHandlerStuck", "OpgenNoLeader", "OpgenWatchFailing", "OpgenWebhookCertificateExpiresSoon"} {
		assert.Contains(t, with, want)
	}
	opts := options()
	opts.Webhooks = false
	assert.NotContains(t, names(rulesOf(t, opts)), "OpgenWebhookCertificateExpiresSoon")
	stuck := rulesOf(t, options())[0]
	assert.Equal(t, "OpgenHandlerStuck", stuck.Alert)
	assert.Equal(t, `max by (namespace, job, controller) (opgen_reconcile_stuck{job="widget-operator-metrics"}) > 0`, stuck.Expr)
}

func TestWriteWritesBoth(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "monitoring")
	written, err := monitoring.Write(dir, options())
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "widget-operator-dashboard.json"), filepath.Join(dir, "widget-operator-prometheusrule.yaml")}, written)
	for _, p := range written {
		assert.FileExists(t, p)
	}
	_, err = monitoring.Write(dir, monitoring.Options{})
	assert.ErrorContains(t, err, "pass --name")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2)
}
