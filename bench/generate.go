// Package bench is the benchmark suite that measures opgen side by side with
// controller-runtime on one local control plane; see README.md. This file
// only holds the go:generate line for the benchmark API (apis/load/v1).
package bench

//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen generate --strict ./... --name bench-operator
