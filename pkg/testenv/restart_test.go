package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStopAndRestartServers stops and restarts the apiserver, then etcd,
// each in seconds; the stored objects and the admin config survive. Not
// parallel: the other tests share these servers (parallel tests run only
// after the sequential ones).
func TestStopAndRestartServers(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	start := time.Now()
	env.StopAPIServer()
	took := time.Since(start)
	t.Logf("kube-apiserver stopped in %v", took)
	assert.Less(t, took, 10*time.Second, "kube-apiserver must stop in seconds (it took a minute on SIGTERM alone)")
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = cms.Get(short, "kept", metav1.GetOptions{})
	cancel()
	require.Error(t, err, "the apiserver still answers after StopAPIServer")
	require.NoError(t, env.StartAPIServer(ctx))
	_, err = cms.Get(ctx, "kept", metav1.GetOptions{})
	require.NoError(t, err, "after StartAPIServer, with the same config")

	start = time.Now()
	env.StopEtcd()
	took = time.Since(start)
	t.Logf("etcd stopped in %v", took)
	assert.Less(t, took, 10*time.Second)
	short, cancel = context.WithTimeout(ctx, 3*time.Second)
	_, err = cms.Create(short, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lost"}}, metav1.CreateOptions{})
	cancel()
	require.Error(t, err, "a write succeeded without etcd")
	require.NoError(t, env.StartEtcd(ctx))
	require.Eventually(t, func() bool {
		_, err := cms.Get(ctx, "kept", metav1.GetOptions{})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "the apiserver did not reach the restarted etcd within 30s")
}
