package testenv

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// ServiceAccountConfig returns a config that authenticates as the service
// account namespace/name with a real token from the TokenRequest API, so the
// apiserver applies exactly the RBAC rules bound to that account. The
// account is created when missing.
func (e *Environment) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	_, err := e.clientset.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("testenv: create service account %s/%s: %w", namespace, name, err)
	}
	expiry := int64(24 * 60 * 60)
	tr, err := e.clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("testenv: request a token for %s/%s: %w", namespace, name, err)
	}
	cfg := e.anonymousConfig()
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// ImpersonateServiceAccount returns an admin config that impersonates the
// service account namespace/name with its usual groups. Unlike
// ServiceAccountConfig it needs no account object, which suits manifests
// that have not been applied yet.
func (e *Environment) ImpersonateServiceAccount(namespace, name string) *rest.Config {
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return cfg
}

// anonymousConfig trusts the apiserver but carries no credentials.
func (e *Environment) anonymousConfig() *rest.Config {
	return &rest.Config{
		Host:            e.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.creds.caPEM},
		QPS:             e.Config.QPS,
		Burst:           e.Config.Burst,
	}
}
