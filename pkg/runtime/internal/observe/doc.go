// Package observe turns an operator's telemetry into Prometheus metrics
// and log lines. Both are subscribers of the operator's telemetry.Bus, as
// a user's hook can be. Failures are logged at a bounded rate.
package observe
