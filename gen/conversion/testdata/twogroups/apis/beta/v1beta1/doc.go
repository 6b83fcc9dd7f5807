// Package v1beta1 is the v1beta1 version of the beta group.
//
// +groupName=beta.example.com
package v1beta1
