package markers

// WebhookValidate gives a kind a validating admission webhook: the API
// server asks the operator to accept or reject every create and update of
// the kind's objects in this version, for the checks CEL cannot express
// (against other objects, against the cluster). opgen writes once, in the
// controller package, internal/controller/<kind>_webhook.go with a type
// <Kind>Webhook and its ValidateCreate and ValidateUpdate methods
// (webhook.Validator), and the generated Setup registers it. Return
// apierrors.NewInvalid with a field.ErrorList so that kubectl shows
// "spec.title: Invalid value: ...". Deletions are checked only when the
// type also has ValidateDelete (webhook.DeleteValidator): the webhook is
// registered for DELETE then, and, failing closed, refuses deletions
// while the operator is down.
//
//	// +opgen:webhook:validate
//
// opgen manifests then writes the ValidatingWebhookConfiguration, the
// webhook Service and the RBAC of the runtime's certificates (see
// opgen help webhooks).
type WebhookValidate struct{}

// WebhookDefault gives a kind a defaulting (mutating) admission webhook:
// the API server sends every create and update of the kind's objects in
// this version to the operator's Default method, which sets defaults on
// the object in place; the webhook answers with the JSON patch between
// the object received and the object defaulted. opgen writes the method
// once in internal/controller/<kind>_webhook.go (type <Kind>Webhook,
// webhook.Defaulter) and the generated Setup registers it.
//
//	// +opgen:webhook:default
//
// opgen manifests then writes the MutatingWebhookConfiguration, the
// webhook Service and the RBAC of the runtime's certificates.
type WebhookDefault struct{}

// WebhookSpec is what the +opgen:webhook markers of one kind say.
type WebhookSpec struct {
	// Validate and Default say which webhooks the kind has.
	Validate, Default bool
}

// Names of the webhook markers, which do not imply +opgen:controller.
const (
	WebhookValidateMarker = "opgen:webhook:validate"
	WebhookDefaultMarker  = "opgen:webhook:default"
)

// IsWebhook reports whether name is a +opgen:webhook marker.
func IsWebhook(name string) bool {
	return name == WebhookValidateMarker || name == WebhookDefaultMarker
}

// ApplyToWebhook turns the validating webhook on.
func (WebhookValidate) ApplyToWebhook(spec *WebhookSpec) { spec.Validate = true }

// ApplyToWebhook turns the defaulting webhook on.
func (WebhookDefault) ApplyToWebhook(spec *WebhookSpec) { spec.Default = true }
