// Package v1 is version v1 of a kind whose older version is deprecated.
//
// +groupName=deprecation.opgen.dev
package v1
