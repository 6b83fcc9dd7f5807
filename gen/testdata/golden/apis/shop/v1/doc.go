// Package v1 is the storage version of the shop API.
//
// +groupName=shop.example.com
package v1
