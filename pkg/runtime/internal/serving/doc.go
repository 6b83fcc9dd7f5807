// Package serving runs an operator's HTTP endpoints: /metrics (over HTTPS
// to authorized callers, or plain HTTP), /healthz and /readyz, and pprof,
// each on its address or sharing one; the user checks behind /healthz and
// /readyz; the probe of the API server readiness asks; and the Runnables
// every replica runs beside them (the webhook server). Package runtime
// builds them from its Options and keeps the Operator's methods thin.
package serving
