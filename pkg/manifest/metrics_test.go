package manifest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// objectsOf parses a manifest into its documents, by "Kind name".
func objectsOf(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var m metav1.PartialObjectMetadata
		require.NoError(t, yaml.Unmarshal(doc, &m))
		out[m.Kind+" "+m.Name] = doc
	}
	return out
}

func clusterRole(t *testing.T, objects map[string][]byte, name string) *rbacv1.ClusterRole {
	t.Helper()
	doc, ok := objects["ClusterRole "+name]
	if !ok {
		return nil
	}
	var r rbacv1.ClusterRole
	require.NoError(t, yaml.UnmarshalStrict(doc, &r))
	return &r
}

// TestMetricsRBACFollowsTheMode: secure metrics (the default) bind the
// operator to the review rules and write the metrics reader role; plain
// metrics neither.
func TestMetricsRBACFollowsTheMode(t *testing.T) {
	t.Parallel()
	for _, insecure := range []bool{false, true} {
		opts := options()
		opts.MetricsInsecure = insecure
		out, err := manifest.Build(opts)
		require.NoError(t, err)
		objects := objectsOf(t, out)
		operator := clusterRole(t, objects, "widget-operator")
		require.NotNil(t, operator, "the operator's ClusterRole")
		for _, r := range manifest.MetricsAuthRules() {
			assert.False(t, containsRule(operator.Rules, r), "the controllers' role stays as opgen generate wrote it: %v", r)
		}
		auth := clusterRole(t, objects, "widget-operator-metrics-auth")
		reader := clusterRole(t, objects, "widget-operator-metrics-reader")
		if insecure {
			assert.Nil(t, auth, "no review rules for plain metrics")
			assert.NotContains(t, objects, "ClusterRoleBinding widget-operator-metrics-auth")
			assert.Nil(t, reader, "no reader role for plain metrics")
			assert.Contains(t, string(out), "--metrics-secure=false")
			continue
		}
		require.NotNil(t, auth)
		assert.Equal(t, manifest.MetricsAuthRules(), auth.Rules)
		var binding rbacv1.ClusterRoleBinding
		require.NoError(t, yaml.UnmarshalStrict(objects["ClusterRoleBinding widget-operator-metrics-auth"], &binding))
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: auth.Name}, binding.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "widget-operator", Namespace: "widget-system"}}, binding.Subjects)
		require.NotNil(t, reader)
		assert.Equal(t, []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}, reader.Rules)
		assert.Contains(t, string(out), "--metrics-secure=true")
	}
}

func containsRule(rules []rbacv1.PolicyRule, want rbacv1.PolicyRule) bool {
	for _, r := range rules {
		if assert.ObjectsAreEqual(r, want) {
			return true
		}
	}
	return false
}

func TestServiceMonitorNeedsTheDeployment(t *testing.T) {
	t.Parallel()
	opts := options()
	opts.Image, opts.ServiceMonitor = "", true
	_, err := manifest.Build(opts)
	assert.ErrorContains(t, err, "pass --image, or drop --service-monitor")
}

// TestServerAcceptsTheMetricsObjects: the metrics Service, reader role and
// ServiceMonitor pass a server-side dry run. The Prometheus Operator's CRD
// is not part of the test control plane: a stand-in that serves the kind
// and keeps any spec is installed, so the ServiceMonitor is checked as an
// object of its kind, not against the Prometheus Operator's schema.
func TestServerAcceptsTheMetricsObjects(t *testing.T) {
	t.Parallel()
	installServiceMonitorKind(t)
	opts := options()
	opts.ServiceMonitor = true
	opts.Namespace = env.Namespace(t)
	out, err := manifest.Build(opts)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, out, 0o600))
	got, err := exec.Command(env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--dry-run=server", "-f", path).CombinedOutput()
	require.NoError(t, err, string(got))
	for _, want := range []string{
		"clusterrole.rbac.authorization.k8s.io/widget-operator-metrics-reader created (server dry run)",
		"service/widget-operator-metrics created (server dry run)",
		"servicemonitor.monitoring.coreos.com/widget-operator-metrics created (server dry run)",
	} {
		assert.Contains(t, string(got), want)
	}
}

func installServiceMonitorKind(t *testing.T) {
	t.Helper()
	cs, err := apiextensions.NewForConfig(env.Config)
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servicemonitors.monitoring.coreos.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
			}},
		},
	}
	ctx := context.Background()
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	testkit.Eventually(t, "the ServiceMonitor stand-in CRD to be established", func() bool {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	})
}
