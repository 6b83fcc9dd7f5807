// Package v1 is version v1 of the todo.example.com API: Todos.
//
// +groupName=todo.example.com
package v1
