// Package testapi is a hand-written stand-in for what opgen generates for a
// custom kind: the Gadget type (group test.opgen.dev, version v1) with
// deepcopy, observed-generation and condition accessors, a typed client on
// client-go's gentype, an informer and a runtime.Kind built from them. The
// tests of the runtime and of the packages built on it (external,
// scheduler, task) drive it exactly as generated glue would. crd/ holds its
// CustomResourceDefinition.
package testapi
