package manifest

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// The webhook certificate: the RBAC with which the runtime keeps it
// (certs.Managed), in the cluster and run locally, or cert-manager's
// objects when it issues it instead.

// webhookRBAC lets the runtime keep its CA and serving certificate in
// the Secret <name>-webhook-cert of its namespace and the caBundle of the
// configurations and converted CRDs current (certs.Managed): it reads and
// writes that one Secret (create cannot be narrowed by name), and reads
// and patches its own configurations and CRDs by name.
func (o *builder) webhookRBAC() []any {
	name := o.Name + "-webhook-cert"
	secret := []string{hooks.SecretName(o.Name)}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: o.meta(name, true),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secret, Verbs: []string{"get", "update"}},
		},
	}
	cluster := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: o.meta(name, false),
	}
	var configs []string
	for _, c := range WebhookConfigurations(o.Name, o.Namespace, o.wh.hooks) {
		switch c := c.(type) {
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			configs = append(configs, c.Name)
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			configs = append(configs, c.Name)
		}
	}
	if len(configs) > 0 {
		cluster.Rules = append(cluster.Rules,
			rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, ResourceNames: configs, Verbs: []string{"get", "patch"}},
		)
	}
	if len(o.wh.converted) > 0 {
		cluster.Rules = append(cluster.Rules,
			rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: o.wh.converted, Verbs: []string{"get", "patch"}},
		)
	}
	return []any{role, o.roleBinding(name), cluster, o.clusterRoleBinding(name)}
}

// localWebhookRBAC lets an operator run outside the cluster, against the
// manifest's RBAC, register its webhooks itself (local mode): apply its
// two configurations and the conversion stanza of the CRDs it converts,
// with its local URL. Applying an object that does not exist yet creates
// it, so create is granted on the configurations; patch and delete only
// by name (delete removes one that calls webhooks the operator does not
// serve, as when it runs with --webhook-bind-address=0).
func (o *builder) localWebhookRBAC() []any {
	name := o.Name + "-webhook-local"
	cluster := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: o.meta(name, false),
	}
	if len(o.wh.hooks) > 0 {
		cluster.Rules = append(cluster.Rules,
			rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: []string{"create", "get", "list", "watch"}},
			rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, ResourceNames: []string{hooks.ValidatingConfigurationName(o.Name), hooks.MutatingConfigurationName(o.Name)}, Verbs: []string{"delete", "patch"}},
		)
	}
	if len(o.wh.converted) > 0 {
		cluster.Rules = append(cluster.Rules,
			rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: o.wh.converted, Verbs: []string{"get", "patch"}},
		)
	}
	return []any{cluster, o.clusterRoleBinding(name)}
}

// certManagerObjects are a self-signed Issuer and the Certificate of the
// webhook Service, whose Secret the container mounts.
func (o *builder) certManagerObjects() []any {
	meta := func(name string) map[string]any {
		m := o.meta(name, true)
		labels := map[string]any{}
		for k, v := range m.Labels {
			labels[k] = v
		}
		return map[string]any{"name": m.Name, "namespace": m.Namespace, "labels": labels}
	}
	issuer := o.Name + "-selfsigned"
	svc := hooks.ServiceName(o.Name) + "." + o.Namespace + ".svc"
	return []any{
		map[string]any{
			"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
			"metadata": meta(issuer),
			"spec":     map[string]any{"selfSigned": map[string]any{}},
		},
		map[string]any{
			"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
			"metadata": meta(hooks.SecretName(o.Name)),
			"spec": map[string]any{
				"secretName": hooks.SecretName(o.Name),
				"dnsNames":   []any{svc, svc + ".cluster.local"},
				"issuerRef":  map[string]any{"kind": "Issuer", "name": issuer},
			},
		},
	}
}
