// Package hooks describes an operator's webhooks to the API server: the
// paths and names of its admission webhooks (Hook), the Service that
// reaches them, the Validating and MutatingWebhookConfigurations and a
// CRD's conversion stanza. The manifests (opgen manifests) and the
// runtime's own registration (local development, tests) build them with
// the same functions, so the two cannot drift.
//
// It links no operator runtime, so that the generator and the opgen CLI
// use it; package webhook, which serves the webhooks, re-exports it.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package hooks
