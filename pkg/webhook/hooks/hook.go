package hooks

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// HookType is what an admission webhook does.
type HookType string

const (
	// Validating webhooks accept or reject.
	Validating HookType = "validate"
	// Mutating webhooks set defaults.
	Mutating HookType = "mutate"
)

// ConvertPath is the path of the conversion webhook, one for every kind.
const ConvertPath = "/convert"

// Port is the container port the webhook server listens on in a cluster;
// the webhook Service maps port 443 to it.
const Port = 9443

// Hook describes one admission webhook of a kind.
type Hook struct {
	Type       HookType
	GVK        schema.GroupVersionKind
	Resource   string // plural, such as "todos"
	Namespaced bool
	// Delete says that a validating webhook checks deletions (its
	// handler has ValidateDelete): only then is it called on DELETE. A
	// webhook called on DELETE with failurePolicy Fail refuses every
	// deletion of the kind while the operator is down.
	Delete bool
}

// Path is the URL path the API server calls, as kubebuilder spells it:
// /validate-todo-example-com-v1-todo.
func (h Hook) Path() string {
	return "/" + string(h.Type) + "-" + strings.ReplaceAll(h.GVK.Group, ".", "-") + "-" + h.GVK.Version + "-" + strings.ToLower(h.GVK.Kind)
}

// Name is the webhook's name in its configuration, a qualified name that
// is unique per kind and type: vtodo.todo.example.com (m for mutating).
func (h Hook) Name() string {
	return string(h.Type[0]) + strings.ToLower(h.GVK.Kind) + "." + h.GVK.Group
}

// Operations are the operations the webhook is called for: create and
// update, and delete for a validating webhook that checks deletions
// (Delete).
func (h Hook) Operations() []admissionregistrationv1.OperationType {
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	if h.Type == Validating && h.Delete {
		ops = append(ops, admissionregistrationv1.Delete)
	}
	return ops
}

// ServiceName is the operator's webhook Service.
func ServiceName(operator string) string { return operator + "-webhook" }

// SecretName is the Secret that holds the webhook CA and serving
// certificate the runtime manages.
func SecretName(operator string) string { return operator + "-webhook-cert" }

// ValidatingConfigurationName is the operator's
// ValidatingWebhookConfiguration.
func ValidatingConfigurationName(operator string) string { return operator + "-validating" }

// MutatingConfigurationName is the operator's MutatingWebhookConfiguration.
func MutatingConfigurationName(operator string) string { return operator + "-mutating" }
