package plug

import "github.com/opgen-sdk/opgen/apis"

// The names below are the last release's for what a controller owns; each
// stays for one release and does what its replacement does.

// Descendant is an owned object's declaration.
//
// Deprecated: use OwnedObject.
type Descendant = OwnedObject

// DescendantStore applies and prunes owned objects.
//
// Deprecated: use OwnedStore.
type DescendantStore = OwnedStore

// ApplyDescendants applies the owned objects an action declares.
//
// Deprecated: use ApplyOwned.
func ApplyDescendants[T apis.Object](env Env[T]) Step[T] { return ApplyOwned(env) }

// Descendants returns what Own declared.
//
// Deprecated: use Action.Owned.
func (a *Action[T]) Descendants() []OwnedObject { return a.Owned() }

// SetDescendants replaces what Own declared.
//
// Deprecated: use Action.SetOwned.
func (a *Action[T]) SetDescendants(d []OwnedObject) { a.SetOwned(d) }

// LabelDescendants asks for labels on every owned object.
//
// Deprecated: use Action.LabelOwned.
func (a *Action[T]) LabelDescendants(labels map[string]string) { a.LabelOwned(labels) }

// DescendantLabels returns the labels asked for.
//
// Deprecated: use Action.OwnedLabels.
func (a *Action[T]) DescendantLabels() map[string]string { return a.OwnedLabels() }
