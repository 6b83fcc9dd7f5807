// Package v2 is a fixture of the compatibility gate.
//
// +groupName=compat.example.com
package v2
