// Package helmcheck proves the Helm chart that `opgen manifests --format
// helm` writes against Helm's own Go library: with the default values it
// renders the objects of the flat manifest, other values change them as
// they say, and the API server accepts what it renders. It is a module of
// its own, so that Helm and its dependencies stay out of opgen's go.mod.
//
// Run it with `cd hack/helmcheck && go test ./...` (make test does).
package helmcheck
