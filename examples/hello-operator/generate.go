// Command hello-operator runs Greetings: for each one, a small web server
// (a Deployment of two replicas) and a Service on port 5000 that answer with
// the greeting. It is the code of the hello-operator tutorial
// (docs/tutorials/hello-operator.md).
package main

//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen generate --strict ./...
//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen manifests --image hello-operator:dev --out deploy/hello-operator.yaml --monitoring deploy/monitoring
//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen manifests --member --out deploy/hello-operator-member.yaml
