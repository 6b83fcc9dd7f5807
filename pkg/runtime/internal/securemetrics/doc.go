// Package securemetrics serves /metrics over HTTPS to the scrapers the API
// server lets in. It checks a bearer token with a TokenReview and the
// user's right to get the path with a SubjectAccessReview, as
// controller-runtime's pkg/metrics/filters and kube-controller-manager do.
// The answers are cached as k8s.io/apiserver's delegating authenticator and
// authorizer cache them.
package securemetrics
