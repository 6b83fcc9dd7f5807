package manifest

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberTokenSecret is the name of the token Secret of the operator's
// ServiceAccount in a member cluster's manifest (Options.Member).
func MemberTokenSecret(name string) string { return name + "-member-token" }

// memberObjects are a member cluster's objects (Options.Member).
func (o *builder) memberObjects(crds []map[string]any, clusterRole *rbacv1.ClusterRole) []any {
	objects := []any{o.namespace()}
	for _, crd := range crds {
		objects = append(objects, o.labelUnstructured(crd))
	}
	token := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: o.meta(MemberTokenSecret(o.Name), true),
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	token.Annotations = map[string]string{corev1.ServiceAccountNameKey: o.ServiceAccount}
	return append(objects, o.serviceAccount(), clusterRole, o.clusterRoleBinding(clusterRole.Name), token)
}
