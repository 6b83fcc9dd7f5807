// Package v1 holds version v1 of the batch.patterns.opgen.dev API.
//
// +groupName=batch.patterns.opgen.dev
package v1
