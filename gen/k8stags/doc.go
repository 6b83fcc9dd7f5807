// Package k8stags reads Kubernetes' declarative validation tags, the
// +k8s: comments that validation-gen (k8s.io/code-generator) turns into
// Go validation of Kubernetes' own types, as CRD markers: each tag with a
// CRD meaning gives the OpenAPI property or x-kubernetes-validations rule
// that the equivalent kubebuilder marker gives, so the API server, and
// pkg/validation, enforce it (with the API server's ratcheting of
// unchanged values).
//
// # Flow
//
// Register adds the tags that constrain one value to controller-tools'
// marker registry, after controller-tools' own (which already reads
// +k8s:required, +k8s:optional, +k8s:immutable, +k8s:listType and
// +k8s:listMapKey): the CRD parser applies them to the field's or type's
// schema as it applies kubebuilder's. Amend adds the rules that field tags
// ask of the struct around them (unions, +k8s:forbidden, dependencies,
// +k8s:update=NoSet), which a field marker cannot write, to the parser's
// schemas before the CRDs are built from them. Check reports, at the
// tag's line, the tags that mean nothing to a CRD and those that say
// otherwise than a kubebuilder marker on the same field: warnings with
// the fix, never errors, since validation-gen accepts them.
//
// The types of Kubernetes' own modules (k8s.io/...), such as the pod
// template a CRD embeds, keep the schema controller-gen gives them: their
// tags are read only as controller-tools reads them, so that a project
// gets the CRD controller-gen writes.
//
// Table lists every tag validation-gen defines, supported or not, with
// why; docs/generate.md shows it.
//
// # Guarantees
//
//   - A tag and the kubebuilder marker Table names for it give the same
//     CRD (the fixture test in testdata/).
//   - When a tag and a kubebuilder marker bound the same value, the CRD
//     holds the stricter bound, whichever order the parser applies them.
package k8stags
