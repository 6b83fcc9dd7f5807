// Package validation checks objects against their generated
// CustomResourceDefinitions in-process, with the API server's own
// libraries (k8s.io/apiextensions-apiserver): the OpenAPI schema, the CEL
// rules (x-kubernetes-validations, transition rules included), list
// types, embedded resources and defaults. A unit test catches an invalid
// object without a server:
//
//	crds, err := validation.Load("config/crd")
//	...
//	errs := crds.Validate(ctx, &todov1.Todo{Spec: todov1.TodoSpec{Title: ""}})
//	// errs[0].Error(): spec.title: Invalid value: "": spec.title in body should be at least 1 chars long
//
// # Guarantees
//
// Validate runs the steps the API server runs on create, in its order:
// unknown fields and the nulls of non-nullable fields are pruned, defaults
// applied, then the schema, the embedded ObjectMeta, the list-type
// invariants and the CEL rules are checked. The field paths and messages
// are the server's. ValidateUpdate adds the old object, for transition
// rules (oldSelf) and the server's CRD validation ratcheting: an invalid
// value the update leaves as it was passes the schema, list-type and CEL
// checks.
//
// # Caveats
//
// ObjectMeta itself (name syntax, labels) is not checked, the status of a
// kind with the status subresource is dropped on create as the server
// drops it, and nothing that needs the cluster (admission, webhooks,
// conversion between versions, uniqueness) runs.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package validation
