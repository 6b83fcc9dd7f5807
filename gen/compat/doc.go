// Package compat is opgen generate's API compatibility gate: it compares
// every CRD the run generates with the same CRD in the last release, and
// fails the run, at the Go field, on each change that breaks the objects
// clusters already hold or the clients that read and write them.
//
// The baseline is the CRDs that `opgen release` (Release) recorded in
// config/released, or, with --baseline-ref, the CRDs the project had at a
// git commit or tag (LoadBaseline). Without one the gate is off, and the
// command line says so.
//
// The rules (Rules) are those of OLM's CRD upgrade safety check and
// crdify's: a scope change, a removed version, a removed field, a changed
// type, a new required field, a changed default, a new enum or a removed
// value, a tighter bound or pattern, a new CEL rule or name rule, a
// changed list type or map keys, nullable, preserve-unknown-fields or
// additionalProperties removed, anyOf and the like; and, between versions
// served together, one stricter than another (CompareServed). Safe
// changes pass: new optional fields, new enum values, looser bounds, new
// versions. A change no rule compares fails closed (unknown-change). Each
// message says what the change does to existing objects, and whether the
// API server's validation ratcheting keeps them writable; the server test
// (servertest) checks those claims on a real API server.
//
// Each rule is an error, a warning or off, as config/released/compat.yaml
// says (LoadPolicy); description-changed is off by default. Package
// preflight checks a cluster's objects against a release's CRDs (opgen
// release --live).
//
// A finding is acknowledged on purpose, and then passes, with a marker
// above the field (or, for what no longer exists, the type that held it
// or the kind's type):
//
//	// +opgen:compat:allow=<rule> reason="<why>"
//
// docs/upgrading.md is the manual.
package compat
