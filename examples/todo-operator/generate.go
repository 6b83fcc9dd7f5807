// Command todo-operator runs Todos: it marks overdue ones in their status on
// a period and archives each deleted Todo in the ConfigMap todo-archive of
// its namespace, behind a finalizer so that no deletion is missed. It is the
// code of the todo-operator tutorial (docs/tutorials/todo-operator.md).
package main

//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen generate --strict ./...
//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen manifests --image todo-operator:dev --out deploy/todo-operator.yaml --monitoring deploy/monitoring
