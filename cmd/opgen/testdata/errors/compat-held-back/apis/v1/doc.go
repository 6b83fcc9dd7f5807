// Package v1 is a failure fixture: the held-back change set of the compatibility gate.
//
// +groupName=compat.example.com
package v1
