// Package controller has a webhook marker on a handler type.
package controller

// PodWebhook would admit Pods.
//
// +opgen:webhook:default
type PodWebhook struct{}
