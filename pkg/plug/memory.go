package plug

// Memory is per-object scratch space for steps. The runtime keeps one per
// object while the object exists and hands the same one to every action on
// it; one object is never handled twice at once, so steps need no locking.
// Keys are step names; a step must not touch another step's entry.
type Memory map[string]any
