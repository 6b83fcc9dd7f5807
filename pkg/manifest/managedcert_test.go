package manifest_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// TestManagedCertificateNeedsNoMoreThanTheManifest applies the
// ServiceAccount and RBAC of a webhook manifest (no cert-manager) and runs
// the runtime's managed certificate as that ServiceAccount: it creates its
// Secret and fills the caBundle of the operator's two configurations with
// exactly those rules. (The configurations here match no object, so that
// they affect no other test; the converted CRD's caBundle, under a rule of
// the same shape, is left out for the same reason.) Not parallel: the
// configurations exist for real while it runs.
func TestManagedCertificateNeedsNoMoreThanTheManifest(t *testing.T) {
	ctx := context.Background()
	opts := webhookOptions()
	opts.Name = "managed-cert"
	opts.Namespace = env.Namespace(t)
	out, err := manifest.Build(opts)
	require.NoError(t, err)
	var docs []string
	for _, doc := range strings.Split(string(out), "\n---\n") {
		if strings.Contains(doc, "kind: ServiceAccount") || strings.Contains(doc, "apiVersion: rbac.authorization.k8s.io/v1") {
			docs = append(docs, doc)
		}
	}
	path := filepath.Join(t.TempDir(), "rbac.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o600))
	got, err := exec.CommandContext(ctx, env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig, "apply", "-f", path).CombinedOutput()
	require.NoError(t, err, string(got))
	t.Cleanup(func() {
		_, _ = exec.Command(env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig, "delete", "--ignore-not-found", "-f", path).CombinedOutput()
	})

	admission := env.Clientset().AdmissionregistrationV1()
	nothing := &metav1.LabelSelector{MatchLabels: map[string]string{"managed-cert.opgen.dev/never": "set"}}
	hook := func(name string) (admissionregistrationv1.WebhookClientConfig, []admissionregistrationv1.RuleWithOperations) {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/" + name)},
			[]admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"managed-cert.opgen.dev"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}}}}
	}
	vc, vr := hook("validate")
	_, err = admission.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: hooks.ValidatingConfigurationName(opts.Name)},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v.managed-cert.opgen.dev", ClientConfig: vc, Rules: vr, ObjectSelector: nothing,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	mc, mr := hook("mutate")
	_, err = admission.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: hooks.MutatingConfigurationName(opts.Name)},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "m.managed-cert.opgen.dev", ClientConfig: mc, Rules: mr, ObjectSelector: nothing,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admission.ValidatingWebhookConfigurations().Delete(context.Background(), hooks.ValidatingConfigurationName(opts.Name), metav1.DeleteOptions{})
		_ = admission.MutatingWebhookConfigurations().Delete(context.Background(), hooks.MutatingConfigurationName(opts.Name), metav1.DeleteOptions{})
	})

	cfg, err := env.ServiceAccountConfig(ctx, opts.Namespace, opts.Name)
	require.NoError(t, err)
	src, err := certs.Managed(certs.ManagedOptions{
		Client:                   kubernetes.NewForConfigOrDie(cfg),
		Namespace:                opts.Namespace,
		SecretName:               hooks.SecretName(opts.Name),
		Service:                  hooks.ServiceName(opts.Name),
		ValidatingConfigurations: []string{hooks.ValidatingConfigurationName(opts.Name)},
		MutatingConfigurations:   []string{hooks.MutatingConfigurationName(opts.Name)},
		Resync:                   100 * time.Millisecond,
		Log:                      logr.FromSlogHandler(slog.DiscardHandler),
	})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 1)
	go func() { errs <- src.Run(runCtx) }()
	t.Log("waiting up to 60s for the managed certificate, as the manifest's ServiceAccount, to make its Secret and fill both caBundles")
	require.Eventually(t, func() bool {
		if !src.Ready() {
			return false
		}
		v, err := admission.ValidatingWebhookConfigurations().Get(ctx, hooks.ValidatingConfigurationName(opts.Name), metav1.GetOptions{})
		if err != nil || !bytes.Equal(v.Webhooks[0].ClientConfig.CABundle, src.CABundle()) {
			return false
		}
		m, err := admission.MutatingWebhookConfigurations().Get(ctx, hooks.MutatingConfigurationName(opts.Name), metav1.GetOptions{})
		return err == nil && bytes.Equal(m.Webhooks[0].ClientConfig.CABundle, src.CABundle())
	}, 60*time.Second, 100*time.Millisecond, "the ServiceAccount's rules let the managed certificate do its work (a forbidden error retries, see the operator log)")
	_, err = env.Clientset().CoreV1().Secrets(opts.Namespace).Get(ctx, hooks.SecretName(opts.Name), metav1.GetOptions{})
	require.NoError(t, err)
}
