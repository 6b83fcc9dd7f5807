package hooks

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TimeoutSeconds is how long the API server waits for a webhook.
const TimeoutSeconds = 10

// ClientConfig says how the API server reaches the webhook at a path.
type ClientConfig func(path string) admissionregistrationv1.WebhookClientConfig

// ServiceClientConfig reaches the webhooks through the operator's webhook
// Service in namespace, as in a cluster. caBundle may be nil: the runtime
// or cert-manager fills it in.
func ServiceClientConfig(operator, namespace string, caBundle []byte) ClientConfig {
	return func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{
				Namespace: namespace,
				Name:      ServiceName(operator),
				Path:      ptr.To(path),
				Port:      ptr.To[int32](443),
			},
			CABundle: caBundle,
		}
	}
}

// URLClientConfig reaches the webhooks at base (https://127.0.0.1:port),
// as in local development and in tests.
func URLClientConfig(base string, caBundle []byte) ClientConfig {
	return func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: caBundle}
	}
}

// Configurations builds the operator's ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration for hooks (nil when it has none of the
// type). Every webhook fails closed (failurePolicy Fail: with the operator
// down, writes are rejected rather than admitted unchecked), is called
// only for the operations its handler checks (Hook.Operations: DELETE
// only with a delete check, so deletions need no running operator
// otherwise), declares no side effects and, when namespace is set, is not
// called for objects in the operator's own namespace, so a broken webhook
// cannot lock the operator out of its own Deployment's namespace.
func Configurations(operator, namespace string, hooks []Hook, cc ClientConfig) (*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfiguration) {
	var (
		v *admissionregistrationv1.ValidatingWebhookConfiguration
		m *admissionregistrationv1.MutatingWebhookConfiguration
	)
	for _, h := range hooks {
		rule := admissionregistrationv1.RuleWithOperations{
			Operations: h.Operations(),
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{h.GVK.Group},
				APIVersions: []string{h.GVK.Version},
				Resources:   []string{h.Resource},
				Scope:       ptr.To(admissionregistrationv1.ClusterScope),
			},
		}
		var nsSelector *metav1.LabelSelector
		if h.Namespaced {
			rule.Scope = ptr.To(admissionregistrationv1.NamespacedScope)
			if namespace != "" {
				nsSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{namespace},
				}}}
			}
		}
		switch h.Type {
		case Validating:
			if v == nil {
				v = &admissionregistrationv1.ValidatingWebhookConfiguration{
					TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
					ObjectMeta: metav1.ObjectMeta{Name: ValidatingConfigurationName(operator)},
				}
			}
			v.Webhooks = append(v.Webhooks, admissionregistrationv1.ValidatingWebhook{
				Name:                    h.Name(),
				ClientConfig:            cc(h.Path()),
				Rules:                   []admissionregistrationv1.RuleWithOperations{rule},
				FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
				MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector:       nsSelector,
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr.To[int32](TimeoutSeconds),
				AdmissionReviewVersions: []string{"v1"},
			})
		case Mutating:
			if m == nil {
				m = &admissionregistrationv1.MutatingWebhookConfiguration{
					TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
					ObjectMeta: metav1.ObjectMeta{Name: MutatingConfigurationName(operator)},
				}
			}
			m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name:                    h.Name(),
				ClientConfig:            cc(h.Path()),
				Rules:                   []admissionregistrationv1.RuleWithOperations{rule},
				FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
				MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector:       nsSelector,
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr.To[int32](TimeoutSeconds),
				AdmissionReviewVersions: []string{"v1"},
				ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			})
		}
	}
	return v, m
}

// Conversion is a CRD's conversion stanza that sends conversions to the
// operator's conversion webhook.
func Conversion(cc ClientConfig) *apiextensionsv1.CustomResourceConversion {
	c := cc(ConvertPath)
	wc := &apiextensionsv1.WebhookClientConfig{URL: c.URL, CABundle: c.CABundle}
	if s := c.Service; s != nil {
		wc.Service = &apiextensionsv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: wc, ConversionReviewVersions: []string{"v1"}},
	}
}
