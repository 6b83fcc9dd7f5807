package webhook

import (
	"context"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// Warnings are shown to the client (kubectl prints each as "Warning: ...").
type Warnings []string

// Validator validates a kind's objects on create and update. An error
// rejects the request: return apimachinery's
// apierrors.NewInvalid(kind, name, field.ErrorList) (or Invalid) so that
// kubectl shows "spec.x: Invalid value: ..."; any other error rejects
// with its message. A Validator that also checks deletions implements
// DeleteValidator.
type Validator[T apis.Object] interface {
	ValidateCreate(ctx context.Context, obj T) (Warnings, error)
	ValidateUpdate(ctx context.Context, old, obj T) (Warnings, error)
}

// DeleteValidator is a Validator that also accepts or rejects deletions.
// Only then is the webhook registered for DELETE: every webhook fails
// closed, so one called on DELETE refuses all deletions of the kind while
// the operator is down. Implement ValidateDelete only for a real check.
type DeleteValidator[T apis.Object] interface {
	Validator[T]
	ValidateDelete(ctx context.Context, obj T) (Warnings, error)
}

// Defaulter sets defaults on a kind's objects as they are created or
// updated. It changes obj in place; the server sends the JSON patch from
// the object it received to obj.
type Defaulter[T apis.Object] interface {
	Default(ctx context.Context, obj T) error
}

// HookType is what an admission webhook does (hooks.HookType).
type HookType = hooks.HookType

const (
	// Validating webhooks accept or reject.
	Validating = hooks.Validating
	// Mutating webhooks set defaults.
	Mutating = hooks.Mutating
)

// ConvertPath is the path of the conversion webhook, one for every kind.
const ConvertPath = hooks.ConvertPath

// Port is the container port the webhook server listens on in a cluster;
// the webhook Service maps port 443 to it.
const Port = hooks.Port

// Hook describes one admission webhook of a kind (hooks.Hook).
type Hook = hooks.Hook

// ServiceName is the operator's webhook Service.
func ServiceName(operator string) string { return hooks.ServiceName(operator) }

// SecretName is the Secret that holds the webhook CA and serving
// certificate the runtime manages.
func SecretName(operator string) string { return hooks.SecretName(operator) }

// ValidatingConfigurationName is the operator's
// ValidatingWebhookConfiguration.
func ValidatingConfigurationName(operator string) string {
	return hooks.ValidatingConfigurationName(operator)
}

// MutatingConfigurationName is the operator's MutatingWebhookConfiguration.
func MutatingConfigurationName(operator string) string {
	return hooks.MutatingConfigurationName(operator)
}
