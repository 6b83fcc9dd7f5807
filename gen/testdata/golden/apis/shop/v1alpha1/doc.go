// Package v1alpha1 is the first version of the shop API.
//
// +groupName=shop.example.com
package v1alpha1
