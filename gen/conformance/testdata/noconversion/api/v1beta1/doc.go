// Package v1beta1 is the v1beta1 version of the library API.
// +groupName=library.example.com
package v1beta1
