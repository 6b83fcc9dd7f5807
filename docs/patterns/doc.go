// Package patterns is the operator project of docs/patterns.md: a Schedule
// runs a Job from its template every period and keeps the last few. Its
// generated code is committed; patterns_test.go runs it against a real API
// server with a fake clock, and checks that every Go snippet of
// docs/patterns.md is this project's code.
package patterns

//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen generate --strict ./... --name patterns-operator
