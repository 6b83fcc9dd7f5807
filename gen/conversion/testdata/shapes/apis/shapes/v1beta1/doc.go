// Package v1beta1 is the spoke of the conversion test's kinds.
// +groupName=shapes.conversion.opgen.dev
package v1beta1
