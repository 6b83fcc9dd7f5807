// Package chaos holds fault-injection tests that run real operator
// processes (built from the examples) against a real API server and etcd
// and kill them. `make chaos` runs them in full (OPGEN_CHAOS=full), `make
// test` runs their quick form. See docs/reliability.md.
package chaos
