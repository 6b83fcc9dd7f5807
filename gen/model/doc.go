// Package model is opgen's API model and its builder: what the annotated
// types of a project declare, read once from the packages a run loaded.
// Every generator works from it rather than from the markers.
//
// The model is an API of Groups, each of Versions (one package each), each
// of Kinds; with the controllers of built-in kinds (BuiltinController)
// and the Conversions between the versions of a kind. It comes from
// +groupName, +kubebuilder:object:root, +kubebuilder:resource,
// +kubebuilder:subresource, code-generator's +genclient tags and the
// +opgen: markers (package gen/markers).
//
// Build takes an explicit Input: the loaded roots, their marker collector
// and type checker, the run's options, and where to record errors and
// warnings. A package goes through it in this order, each step in a file
// of its own:
//
//	lines.go        its marker lines
//	read.go         its group, root kinds, their tags, and the version they make
//	check.go        what the markers and field types say that cannot be
//	controllers.go  what +opgen:controller and +opgen:webhook configure
//	clients.go      which kinds get typed clients
//
// Once every package is read, the whole API is settled: import aliases
// (alias.go), clashes between kinds (check.go), webhooks (controllers.go),
// conversions (conversions.go), skipped packages (clients.go). CRDs come
// from controller-tools' CRD parser over the API packages (schemas.go).
package model
