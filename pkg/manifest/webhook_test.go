package manifest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

const webhookConfig = "testdata/webhooks"

func webhookOptions() manifest.Options {
	o := options()
	o.ConfigDir = webhookConfig
	return o
}

// TestWebhookFile writes the configurations opgen generate would write
// for a validated (deletions too) and defaulted Widget, for the default
// namespace: the input of the webhook goldens, whose DELETE the manifest
// reads back. It is not parallel: with -update, the other tests read
// what it writes.
func TestWebhookFile(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "testenv.opgen.dev", Version: "v1", Kind: "Widget"}
	hs := []hooks.Hook{
		{Type: hooks.Validating, GVK: gvk, Resource: "widgets", Namespaced: true, Delete: true},
		{Type: hooks.Mutating, GVK: gvk, Resource: "widgets", Namespaced: true},
	}
	got, err := manifest.MarshalDocuments(manifest.WebhookConfigurations("widget-operator", "widget-operator-system", hs))
	require.NoError(t, err)
	golden := filepath.Join(webhookConfig, manifest.WebhookDir, manifest.WebhookFile)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestWebhookManifestMatchesGolden(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]manifest.Options{
		"webhooks":              webhookOptions(),
		"webhooks-cert-manager": func() manifest.Options { o := webhookOptions(); o.CertManager = true; return o }(),
		"webhooks-without-image": func() manifest.Options {
			o := webhookOptions()
			o.Image = ""
			return o
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := manifest.Build(opts)
			require.NoError(t, err)
			golden := filepath.Join("testdata", name+".yaml")
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "run `go test ./pkg/manifest -update` if the change is intended")
		})
	}
}

// TestWebhookManifestIsRetargeted: the configurations opgen generate wrote
// for <name>-system are written again for the namespace given, with the
// Service, port, arguments and certificate RBAC, and none of it without
// webhooks.
func TestWebhookManifestIsRetargeted(t *testing.T) {
	t.Parallel()
	out, err := manifest.Build(webhookOptions())
	require.NoError(t, err)
	objs := objectSet(t, out)
	v := objs["ValidatingWebhookConfiguration /widget-operator-validating"]
	require.NotNil(t, v, "objects: %v", keys(objs))
	text := string(out)
	assert.NotContains(t, text, "widget-operator-system", "the namespace opgen generate assumed is replaced")
	assert.Contains(t, text, "path: /validate-testenv-opgen-dev-v1-widget")
	assert.Contains(t, text, "path: /mutate-testenv-opgen-dev-v1-widget")
	assert.Contains(t, text, "--webhook-bind-address=:9443")
	for _, k := range []string{
		"Service widget-system/widget-operator-webhook",
		"Role widget-system/widget-operator-webhook-cert",
		"RoleBinding widget-system/widget-operator-webhook-cert",
		"ClusterRole /widget-operator-webhook-cert",
		"ClusterRoleBinding /widget-operator-webhook-cert",
		"MutatingWebhookConfiguration /widget-operator-mutating",
	} {
		assert.Contains(t, objs, k)
	}
	rules := fmt.Sprint(objs["ClusterRole /widget-operator-webhook-cert"]["rules"])
	assert.Contains(t, rules, "validatingwebhookconfigurations")
	assert.Contains(t, rules, "customresourcedefinitions", "the converted CRD's caBundle is the runtime's to keep")
	assert.Contains(t, rules, "widgets.testenv.opgen.dev")

	plain, err := manifest.Build(options())
	require.NoError(t, err)
	assert.NotContains(t, string(plain), "webhook", "no webhook, no webhook objects")

	cm := webhookOptions()
	cm.CertManager = true
	out, err = manifest.Build(cm)
	require.NoError(t, err)
	objs = objectSet(t, out)
	assert.NotContains(t, objs, "Role widget-system/widget-operator-webhook-cert", "cert-manager keeps the Secret")
	assert.Contains(t, objs, "Certificate widget-system/widget-operator-webhook-cert")
	assert.Contains(t, objs, "Issuer widget-system/widget-operator-selfsigned")
	assert.Contains(t, fmt.Sprint(objs["CustomResourceDefinition /widgets.testenv.opgen.dev"]["metadata"]), "cert-manager.io/inject-ca-from:widget-system/widget-operator-webhook-cert")
	assert.Contains(t, fmt.Sprint(objs["ValidatingWebhookConfiguration /widget-operator-validating"]["metadata"]), "cert-manager.io/inject-ca-from:widget-system/widget-operator-webhook-cert")
	assert.Contains(t, string(out), "--webhook-cert-dir="+manifest.WebhookCertDir)
}

// TestServerAcceptsTheWebhookManifest: a server-side dry run of the
// webhook manifest, both ways; cert-manager's Issuer and Certificate are
// left out of it (the test API server has no cert-manager CRDs) and their
// shape is the golden's.
func TestServerAcceptsTheWebhookManifest(t *testing.T) {
	t.Parallel()
	for _, certManager := range []bool{false, true} {
		opts := webhookOptions()
		opts.CertManager = certManager
		opts.Namespace = env.Namespace(t)
		out, err := manifest.Build(opts)
		require.NoError(t, err)
		var docs []string
		for _, doc := range strings.Split(string(out), "\n---\n") {
			if !strings.Contains(doc, "apiVersion: cert-manager.io/v1") {
				docs = append(docs, doc)
			}
		}
		path := filepath.Join(t.TempDir(), "manifest.yaml")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o600))
		got, err := exec.CommandContext(context.Background(), env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig,
			"apply", "--dry-run=server", "-f", path).CombinedOutput()
		require.NoError(t, err, string(got))
		for _, want := range []string{
			"validatingwebhookconfiguration.admissionregistration.k8s.io/widget-operator-validating created (server dry run)",
			"mutatingwebhookconfiguration.admissionregistration.k8s.io/widget-operator-mutating created (server dry run)",
			"service/widget-operator-webhook created (server dry run)",
			"deployment.apps/widget-operator created (server dry run)",
		} {
			assert.Contains(t, string(got), want)
		}
		if !certManager {
			assert.Contains(t, string(got), "role.rbac.authorization.k8s.io/widget-operator-webhook-cert created (server dry run)")
		}
	}
}

// TestKustomizeBuildsTheWebhookManifest: the kustomize layout puts the
// webhook objects under config/webhook and builds what Build writes.
func TestKustomizeBuildsTheWebhookManifest(t *testing.T) {
	t.Parallel()
	for _, certManager := range []bool{false, true} {
		opts := webhookOptions()
		opts.CertManager = certManager
		opts.ConfigDir = filepath.Join(t.TempDir(), "config")
		require.NoError(t, os.CopyFS(opts.ConfigDir, os.DirFS(webhookConfig)))
		flat, err := manifest.Build(opts)
		require.NoError(t, err)
		written, err := manifest.WriteKustomize(opts)
		require.NoError(t, err)
		assert.Contains(t, written, filepath.Join(opts.ConfigDir, "webhook", "validating_webhook_configuration.yaml"))
		assert.Contains(t, written, filepath.Join(opts.ConfigDir, "webhook", "service.yaml"))
		want := objectSet(t, flat)
		got := objectSet(t, kustomizeBuild(t, filepath.Join(opts.ConfigDir, "default")))
		require.Equal(t, keys(want), keys(got))
		for k := range want {
			assert.Equal(t, want[k], got[k], k)
		}
	}
}

// TestHelmTemplatesTheWebhookNamespace: the chart's webhook objects name
// the release's namespace wherever the flat manifest names the
// operator's (rendered against Helm itself in hack/helmcheck).
func TestHelmTemplatesTheWebhookNamespace(t *testing.T) {
	t.Parallel()
	opts := webhookOptions()
	opts.CertManager = true
	files, err := manifest.Helm(opts)
	require.NoError(t, err)
	var all strings.Builder
	for name, data := range files {
		if strings.HasPrefix(name, "templates/") {
			all.Write(data)
		}
	}
	text := all.String()
	assert.NotContains(t, text, "widget-system", "every namespace is the release's")
	assert.Contains(t, text, "cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/widget-operator-webhook-cert")
	assert.Contains(t, text, "- widget-operator-webhook.{{ .Release.Namespace }}.svc")
	assert.Contains(t, string(files["templates/validating_webhook_configuration.yaml"]), "{{- if .Values.image }}")
	assert.Contains(t, text, "--webhook-bind-address=:9443")
}
