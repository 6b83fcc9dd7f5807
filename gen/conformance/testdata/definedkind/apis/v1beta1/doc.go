// Package v1beta1 is the older version of the grants API, still stored:
// its kind is defined on v1's, as Gateway API's v1beta1 ReferenceGrant is.
// +kubebuilder:object:generate=true
// +groupName=grants.example.com
package v1beta1
