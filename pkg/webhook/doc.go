// Package webhook serves an operator's admission webhooks (typed
// validation and defaulting of a kind) and the conversion webhook of its
// multi-version kinds, on every replica, over HTTPS.
//
// The user implements Validator and Defaulter on a type of the controller
// package (opgen writes the stubs once for a kind marked
// +opgen:webhook:validate or +opgen:webhook:default); the generated Setup
// registers them. One Hook describes each admission webhook to the API
// server: the same description builds the manifests (opgen manifests) and
// the configurations the runtime registers itself in local development
// (opgen dev, make run) and in tests (pkg/testenv), so the paths and names
// below are the contract between the two.
package webhook
