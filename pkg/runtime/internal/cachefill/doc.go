// Package cachefill keeps the operator's caches lean.
//
// Filter sits in the operator's transport (internal/transport). It drops
// the managedFields entries the caches would throw away from list and
// watch responses, before client-go decodes them. Trim is the one rule of what stays of
// managedFields in a cached object; the filter keeps a superset of it.
// Intern shares the strings that repeat from object to object. Pace
// lowers the garbage collector's target while the initial lists decode
// (PaceGC), and at the process's start its processors (PaceProcs).
//
// Only requests made under a context from Fill are filtered: the
// informers' lists and watches, never a handler's own reads.
package cachefill
