// Package versions is a small operator project whose kind, Shape, has a
// controller in two API versions, v1 (stored) and v2, with the same schema
// and conversion None, shared by +opgen:controller:dispatch=written. Its
// generated code is committed; versions_test.go runs its generated Setup
// against a real API server and checks that each object is handled by the
// controller of the version it was written in, and never by both.
package versions

//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen generate --strict ./... --name versions-operator
