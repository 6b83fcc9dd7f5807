// Package v1 is version v1 of the hello.example.com API: Greetings.
//
// +groupName=hello.example.com
package v1
