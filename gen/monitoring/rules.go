package monitoring

import (
	"fmt"
	"maps"

	"sigs.k8s.io/yaml"
)

// RulesHeader opens the PrometheusRule file.
const RulesHeader = "# Written by opgen manifests --monitoring: rerun it to refresh, edits here are lost.\n" +
	"# Needs the Prometheus Operator (monitoring.coreos.com/v1); see go tool opgen help deploying.\n"

// alert is one alerting rule.
type alert struct {
	name, expr, forDuration, severity, summary, description string
}

// alerts are the failure modes of docs/reliability.md that the runtime's
// metrics show, for the scrape job o.Job.
func alerts(o Options) []alert {
	job := fmt.Sprintf("job=%q", o.Job)
	out := []alert{
		{name: "OpgenHandlerStuck", forDuration: "1m", severity: "warning",
			expr:        fmt.Sprintf("max by (namespace, job, controller) (opgen_reconcile_stuck{%s}) > 0", job),
			summary:     "A handler of {{ $labels.controller }} is stuck past its ActionTimeout.",
			description: "It ran past its ActionTimeout and its grace, and did not return when its context was cancelled: its worker waits, and its key is not handled. /readyz and the operator's log name the key (\"stuck\")."},
		{name: "OpgenNoLeader", forDuration: "5m", severity: "critical",
			expr:        fmt.Sprintf("max by (namespace, job) (opgen_leader{%s}) < 1", job),
			summary:     "No replica of {{ $labels.job }} leads: no object is handled.",
			description: "Every replica scraped reports opgen_leader 0. The Lease may be held by a replica that is gone (it expires after the lease duration), or the replicas cannot reach the API server."},
		{name: "OpgenWatchFailing", forDuration: "10m", severity: "warning",
			expr:        fmt.Sprintf(`sum by (namespace, job, controller, kind) (increase(opgen_watch_events_total{%s, event="watch.failed"}[5m])) > 0`, job),
			summary:     "Watches of {{ $labels.kind }} by {{ $labels.controller }} keep failing.",
			description: "The API server is unreachable, or it does not serve the kind (its CRD is missing). The cache is stale meanwhile; the log says which."},
		{name: "OpgenActionsFailing", forDuration: "15m", severity: "warning",
			expr: fmt.Sprintf(`sum by (namespace, job, controller) (rate(opgen_reconcile_errors_total{%s}[10m])) / sum by (namespace, job, controller) (rate(opgen_reconcile_total{%s}[10m])) > 0.5`,
				job, job),
			summary:     "More than half of the actions of {{ $labels.controller }} fail.",
			description: "The Events of the failing objects and their Degraded condition say why."},
		{name: "OpgenActionTimeouts", forDuration: "0m", severity: "warning",
			expr:        fmt.Sprintf("sum by (namespace, job, controller) (increase(opgen_reconcile_timeouts_total{%s}[15m])) > 0", job),
			summary:     "Actions of {{ $labels.controller }} run past their ActionTimeout.",
			description: "They are cancelled and retried with backoff. A handler that waits on something slow should requeue instead of waiting."},
		{name: "OpgenFleetClusterNotReady", forDuration: "10m", severity: "warning",
			expr:        fmt.Sprintf("min by (namespace, job, cluster) (opgen_fleet_cluster_ready{%s}) < 1", job),
			summary:     "Member cluster {{ $labels.cluster }} of the fleet is not ready.",
			description: "Its API server does not answer, or its caches never synced. The other clusters are handled."},
	}
	if o.Webhooks {
		out = append(out, alert{name: "OpgenWebhookCertificateExpiresSoon", forDuration: "1h", severity: "warning",
			expr:        fmt.Sprintf("min by (namespace, job) (opgen_webhook_certificate_expiration_timestamp_seconds{%s}) - time() < 7 * 24 * 3600", job),
			summary:     "The webhook serving certificate of {{ $labels.job }} expires within 7 days.",
			description: "The API server refuses the guarded writes once it expires. The runtime renews a certificate it manages itself; a mounted one (--webhook-cert-dir, cert-manager) is renewed by whoever wrote it."})
	}
	return out
}

// Rules returns the PrometheusRule of the operator's alerts, as YAML.
func Rules(opts Options) ([]byte, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	var rules []map[string]any
	for _, a := range alerts(opts) {
		rules = append(rules, map[string]any{
			"alert":       a.name,
			"expr":        a.expr,
			"for":         a.forDuration,
			"labels":      map[string]string{"severity": a.severity},
			"annotations": map[string]string{"summary": a.summary, "description": a.description},
		})
	}
	labels := map[string]string{"app.kubernetes.io/name": opts.Name, "app.kubernetes.io/managed-by": "opgen"}
	maps.Copy(labels, opts.Labels)
	data, err := yaml.Marshal(map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata":   map[string]any{"name": opts.Name, "namespace": opts.Namespace, "labels": labels},
		"spec":       map[string]any{"groups": []any{map[string]any{"name": opts.Name, "rules": rules}}},
	})
	if err != nil {
		return nil, err
	}
	return append([]byte(RulesHeader), data...), nil
}
