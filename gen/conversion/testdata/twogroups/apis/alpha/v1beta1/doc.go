// Package v1beta1 is the v1beta1 version of the alpha group.
//
// +groupName=alpha.example.com
package v1beta1
