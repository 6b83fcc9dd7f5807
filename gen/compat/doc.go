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
// The rules (Rules) are those of OLM's CRD upgrade safety check: a scope
// change, a removed version, a removed field, a changed type, a new
// required field, a changed default, a new enum or a removed value, a
// tighter bound or pattern, a new CEL rule. Safe changes pass: new
// optional fields, new enum values, looser bounds, new versions. Each
// message says what the change does to existing objects, and whether the
// API server's validation ratcheting keeps them writable; the server test
// (servertest) checks those claims on a real API server.
//
// A finding is acknowledged on purpose, and then passes, with a marker
// above the field (or, for what no longer exists, the type that held it
// or the kind's type):
//
//	// +opgen:compat:allow=<rule> reason="<why>"
//
// docs/upgrading.md is the manual.
package compat
