// Package v1 is a failure fixture.
//
// +groupName=a.example.com
package v1
