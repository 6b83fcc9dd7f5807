// Command widget-operator is a Kubernetes operator built with opgen.
package main

// go generate ./... regenerates everything derivable from the API types:
// deep copies, registration, clientset, listers, informers, apply
// configurations, CRDs, RBAC and the controller glue.
//go:generate go tool opgen generate ./...
