// Package v1 is a fixture of the compatibility gate.
//
// +groupName=compat.example.com
package v1
