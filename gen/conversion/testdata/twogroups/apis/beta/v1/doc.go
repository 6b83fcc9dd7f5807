// Package v1 is the v1 version of the beta group.
//
// +groupName=beta.example.com
package v1
