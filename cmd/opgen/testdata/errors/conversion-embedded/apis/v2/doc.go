// Package v2 is a failure fixture.
//
// +groupName=test.example.com
package v2
