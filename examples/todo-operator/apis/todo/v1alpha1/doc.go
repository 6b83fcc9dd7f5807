// Package v1alpha1 is version v1alpha1 of the todo.example.com API: Todos.
//
// +groupName=todo.example.com
package v1alpha1
