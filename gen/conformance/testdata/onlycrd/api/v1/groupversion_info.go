// Package v1 holds the CronJob of controller-tools' CRD test data, in
// short: a field the JSON encoding skips holds an untyped map, which no
// deep copy could copy, and a test package declares more kinds of the
// same group version. controller-gen's CRD generator takes it as it is.
// +groupName=testdata.kubebuilder.io
// +versionName=v1
package v1
