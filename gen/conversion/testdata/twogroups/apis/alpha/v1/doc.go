// Package v1 is the v1 version of the alpha group.
//
// +groupName=alpha.example.com
package v1
