// Package plug holds what a typed handler works with: the Action that
// carries one object through a pipeline for one verb, the Handler interface
// users implement, the Step interface and Pipeline, and the built-in steps.
package plug
