// Package v1 is the store.opgen.dev/v1 API of the webhook golden project.
// +groupName=store.opgen.dev
package v1
