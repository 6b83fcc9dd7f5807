// Package v1 holds version v1 of the shapes.opgen.dev API.
//
// +groupName=shapes.opgen.dev
package v1
