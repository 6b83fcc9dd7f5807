package controller

// VisitorReconciler reconciles a Visitor object.
type VisitorReconciler struct{}

// +kubebuilder:rbac:groups=webapp.example.com,resources=visitors,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=webapp.example.com,resources=visitors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=webapp.example.com,resources=visitors/finalizers,verbs=update
// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps;batch,resources=deployments;jobs,verbs=get;list
// +kubebuilder:rbac:groups=core,resources=configmaps,resourceNames=visitor-settings,verbs=get;update
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=*
// +kubebuilder:rbac:urls=/metrics;/healthz,verbs=get
// +kubebuilder:rbac:urls=/debug,verbs=get
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;watch,namespace=guestbook-system
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,namespace=guestbook-system,roleName=visitor-leases
