package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
)

func configMapReader(op *runtime.Operator) *runtime.Reader[*corev1.ConfigMap] {
	return runtime.Read[*corev1.ConfigMap](op, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
}

// TestReaderReadsTheWatchedNamespaces: a Reader made before Run is started
// and synced by Run in the operator's namespaces, and reads from there
// only; one of a kind first asked for after Run says it never synced.
func TestReaderReadsTheWatchedNamespaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, other := env.Namespace(t), env.Namespace(t)
	cs := env.Clientset()
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: ns, Labels: map[string]string{"tier": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}},
		{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: other}},
	} {
		_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "reader", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
	})
	require.NoError(t, err)
	r := configMapReader(op)
	testkit.Run(t, op)

	got, err := r.Get(ns, "labelled")
	require.NoError(t, err, "synced before Run returned ready")
	assert.Equal(t, "web", got.Labels["tier"])
	_, err = r.Get(ns, "missing")
	assert.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
	web, err := r.List(ns, labels.SelectorFromSet(labels.Set{"tier": "web"}))
	require.NoError(t, err)
	require.Len(t, web, 1)
	assert.Equal(t, "labelled", web[0].Name)

	_, err = r.Get(other, "elsewhere")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the operator does not watch that namespace")

	again, err := configMapReader(op).Get(ns, "labelled")
	require.NoError(t, err, "a second Reader of a kind shares the running informer")
	assert.Equal(t, got, again)
	secrets := runtime.Read[*corev1.Secret](op, corev1.SchemeGroupVersion.WithKind("Secret"), "secrets", true,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Secrets().Informer()
		})
	_, err = secrets.Get(ns, "any")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make readers before Operator.Run")
}
