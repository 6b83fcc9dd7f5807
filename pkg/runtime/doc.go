// Package runtime runs typed opgen controllers: an Operator owns the
// informers, the controllers, leader election, metrics, health and shutdown;
// Register adds a controller for a Kind with a typed plug.Handler.
package runtime
