// Package widgets is a failure fixture.
//
// +groupName=test.example.com
package widgets
