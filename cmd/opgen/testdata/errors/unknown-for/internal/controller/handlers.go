// Package controller has handlers of built-in kinds that do not exist.
package controller

// PodPrinter misspells its kind.
//
// +opgen:controller:for=v1.Pdo
type PodPrinter struct{}

// DeploymentWatcher forgets the group.
//
// +opgen:controller:for=v1.Deployment
type DeploymentWatcher struct{}

// EventWatcher names a built-in kind opgen has no constructor for.
//
// +opgen:controller:for=events.k8s.io/v1.Event
type EventWatcher struct{}

// WidgetWatcher names a kind of the project.
//
// +opgen:controller:for=test.example.com/v1.Widget
type WidgetWatcher struct{}

// Malformed has no version.
//
// +opgen:controller:for=Pod
type Malformed struct{}
