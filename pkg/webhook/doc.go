// Package webhook serves an operator's admission webhooks (typed
// validation and defaulting of a kind) and the conversion webhook of its
// multi-version kinds, on every replica, over HTTPS.
//
// The user implements Validator and Defaulter on a type of the controller
// package (opgen writes the stubs once for a kind marked
// +opgen:webhook:validate or +opgen:webhook:default); the generated Setup
// registers them. A Validator is called on create and update; one that
// also implements ValidateDelete (DeleteValidator) on delete too, since a
// webhook called on DELETE refuses every deletion while the operator is
// down. One Hook describes each admission webhook to the API
// server: the same description builds the manifests (opgen manifests) and
// the configurations the runtime registers itself in local development
// (opgen dev, make run) and in tests (pkg/testenv), so the paths and names
// below are the contract between the two.
//
// # Registration
//
// The generated Setup calls Validate, Default and Convert before
// Operator.Run. The first call gives the operator its webhook server (one
// per operator, added with runtime.Operator.AddReplicaRunnable, so that every
// replica serves it, leader or not, from Run until the workers drained at
// shutdown) and a readiness check: /readyz fails until the server listens
// with a certificate and, in local mode, has registered the
// configurations (Ready).
//
// # Requests
//
//   - AdmissionReview v1 at Hook.Path: the object (and old object) is
//     decoded into the kind's Go type. A Validator's error rejects the
//     request: an apimachinery API status (apierrors.NewInvalid with a
//     field.ErrorList, NewForbidden, ...) is sent as it is, so kubectl
//     shows "spec.x: Invalid value: ..."; any other error is a 403 with
//     its message. Warnings reach the client. A Defaulter changes the
//     object; the response is the JSON patch from the object received to
//     the defaulted one, computed by gomodules.xyz/jsonpatch as
//     controller-runtime does.
//   - ConversionReview v1 at ConvertPath, for every converted kind: each
//     object goes from its version to the hub and from the hub to the
//     desired version with the scheme's conversion functions.
//   - A panic in user code rejects the request (or fails the conversion)
//     with its message; the connection is never dropped.
//
// Each request is counted in the operator's registry
// (opgen_webhook_requests_total by webhook and result,
// opgen_webhook_rejections_total, opgen_webhook_request_duration_seconds)
// and, with a TracerProvider, is a span SpanWebhook.
//
// # Modes
//
// runtime.WebhookOptions.Mode chooses the certificate and who tells the
// API server where the webhooks are. In cluster mode the manifests point
// the configurations at the webhook Service and the certificate comes
// from package certs (a Secret the runtime manages, or a mounted directory
// with CertDir). In local mode, outside a Pod, the server listens on
// 127.0.0.1 with a certificate made in memory and applies the
// configurations (Configurations with URLClientConfig) and the converted
// CRDs' conversion stanza itself, with the operator's field manager; it
// leaves them at shutdown, so that failurePolicy Fail rejects the guarded
// writes while the operator is down rather than admitting them unchecked.
//
// # Stale registrations
//
// In both modes, and also when the server is disabled (Addr "0"), every
// replica reads its two configurations at start and every 10 s: one that
// calls webhooks the operator does not serve would have the API server
// refuse every write it guards. Locally the server deletes those a local
// run registered; in a cluster, where the manifest owns them, readiness
// fails and names them. docs/webhooks.md says what fails while the
// webhooks are down, and why.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package webhook
