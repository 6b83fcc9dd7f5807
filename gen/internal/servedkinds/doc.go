// Package servedkinds is the table of the kinds Kubernetes' API groups
// serve, by group and version, from client-go's scheme: the generator
// checks a marker's built-in kind against it (owns=apps/v1.Deploymnet)
// without linking client-go's scheme and its 55 API packages.
//
// go generate writes zz_generated.kinds.go from the client-go that go.mod
// requires; a test fails when it is stale.
package servedkinds

//go:generate go run ./internal/write
