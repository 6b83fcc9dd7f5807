// Package v1 is the v1 version of the library API.
// +groupName=library.example.com
package v1
