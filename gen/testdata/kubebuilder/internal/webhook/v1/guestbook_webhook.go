// Package v1 holds the webhooks of the v1 kinds, as kubebuilder scaffolds
// them; here their markers only.
package v1

// +kubebuilder:webhook:path=/mutate-webapp-example-com-v1-guestbook,mutating=true,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=mguestbook-v1.kb.io,admissionReviewVersions=v1

// GuestbookDefaulter sets the defaults of Guestbooks.
type GuestbookDefaulter struct{}

// +kubebuilder:webhook:path=/validate-webapp-example-com-v1-guestbook,mutating=false,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=vguestbook-v1.kb.io,admissionReviewVersions=v1

// GuestbookValidator validates Guestbooks.
type GuestbookValidator struct{}

// +kubebuilder:webhook:path=/validate-webapp-example-com-v1-visitor,mutating=false,failurePolicy=ignore,sideEffects=None,groups=webapp.example.com,resources=visitors,verbs=create;update;delete,versions=v1,name=vvisitor-v1.kb.io,admissionReviewVersions=v1;v1beta1,timeoutSeconds=5

// VisitorValidator validates Visitors.
type VisitorValidator struct{}
