// Package promcheck proves the PromQL that gen/monitoring writes: every
// expression of the Grafana dashboard and of the PrometheusRule parses with
// Prometheus's own parser, and every metric it selects, with the labels it
// matches on, is in a scrape of operators running on the local control
// plane (pkg/testenv), so that no panel stays blank and no alert waits on
// a series that never comes.
//
// It is a Go module of its own, as hack/helmcheck is for Helm, so that the
// Prometheus server module and the versions it requires stay out of
// opgen's go.mod. `make test` runs it: cd hack/promcheck && go test ./...
package promcheck
