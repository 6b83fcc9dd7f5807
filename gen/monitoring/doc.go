// Package monitoring writes what shows an opgen operator at work: a
// Grafana dashboard of the metrics the runtime exports (built with
// github.com/grafana/grafana-foundation-sdk) and a Prometheus Operator
// PrometheusRule of alerts for the failure modes docs/reliability.md names.
//
// # Flow
//
// panels.go lists the dashboard's rows and their PromQL, dashboard.go
// turns them into the SDK's dashboard, rules.go lists the alerts and
// writes the PrometheusRule. Write puts both into a directory; `opgen
// manifests --monitoring DIR` calls it.
//
// # Guarantees
//
//   - Every metric a panel or an alert names is one the runtime exports: a
//     test (hack/promcheck) parses each expression with Prometheus's parser
//     and finds each metric in a scrape of operators running on a real API
//     server.
//   - The dashboard JSON reads back into the SDK's Dashboard type unchanged.
//   - Output is deterministic.
//
// # Caveats
//
// The queries select the scrape job Options.Job: the Service of `opgen
// manifests --service-monitor` gives it. The Sharding and Fleet rows are
// collapsed: their series exist only in operators that shard or run a
// fleet. The work queue's lanes share one depth: no series tells them
// apart.
package monitoring
