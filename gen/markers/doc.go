// Package markers defines opgen's own markers, the `+opgen:` comments
// users put on their API types beside the kubebuilder markers. Each marker
// is a Go type whose godoc shows the marker line and whose
// ApplyToController method applies it; `opgen help markers` prints the
// godoc, through Help methods generated from it (zz_generated.markerhelp.go,
// written by gen/internal/helpgen).
//
// Every +opgen:controller:... marker implies +opgen:controller; the
// +opgen:webhook:validate and +opgen:webhook:default markers do not: a
// kind may have admission webhooks without a controller.
//
// The markers go on a custom kind's API type, or, with
// +opgen:controller:for, on a handler type of a Kubernetes built-in kind in
// the controller package; labelSelector applies only to those.
package markers

//go:generate go run ../internal/helpgen
