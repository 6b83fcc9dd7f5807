// Package v3 is a failure fixture.
//
// +groupName=test.example.com
package v3
