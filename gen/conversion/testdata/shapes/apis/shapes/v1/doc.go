// Package v1 is the hub of the conversion test's kinds.
// +groupName=shapes.conversion.opgen.dev
package v1
