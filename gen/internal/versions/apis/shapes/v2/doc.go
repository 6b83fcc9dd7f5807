// Package v2 holds version v2 of the shapes.opgen.dev API.
//
// +groupName=shapes.opgen.dev
package v2
