package webhook

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// The builders live in package hooks, which links no runtime so that the
// generator and the CLI build the manifests with them; these names keep
// the runtime's callers in one package.

// TimeoutSeconds is how long the API server waits for a webhook.
const TimeoutSeconds = hooks.TimeoutSeconds

// ClientConfig says how the API server reaches the webhook at a path.
type ClientConfig = hooks.ClientConfig

// ServiceClientConfig reaches the webhooks through the operator's webhook
// Service in namespace, as in a cluster (hooks.ServiceClientConfig).
func ServiceClientConfig(operator, namespace string, caBundle []byte) ClientConfig {
	return hooks.ServiceClientConfig(operator, namespace, caBundle)
}

// URLClientConfig reaches the webhooks at base (https://127.0.0.1:port),
// as in local development and in tests (hooks.URLClientConfig).
func URLClientConfig(base string, caBundle []byte) ClientConfig {
	return hooks.URLClientConfig(base, caBundle)
}

// Configurations builds the operator's ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration for hooks (hooks.Configurations).
func Configurations(operator, namespace string, hs []Hook, cc ClientConfig) (*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfiguration) {
	return hooks.Configurations(operator, namespace, hs, cc)
}

// Conversion is a CRD's conversion stanza that sends conversions to the
// operator's conversion webhook (hooks.Conversion).
func Conversion(cc ClientConfig) *apiextensionsv1.CustomResourceConversion {
	return hooks.Conversion(cc)
}
