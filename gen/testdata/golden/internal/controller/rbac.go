// Package controller holds the golden project's controllers.
package controller

// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;update
// +kubebuilder:rbac:urls=/metrics,verbs=get
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=shop-system
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=*,roleName=shop-jobs
