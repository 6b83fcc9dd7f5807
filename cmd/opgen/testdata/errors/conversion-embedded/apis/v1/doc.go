// Package v1 is a failure fixture.
//
// +groupName=test.example.com
package v1
