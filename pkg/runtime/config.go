package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadConfig returns the REST config to run an operator with, looked up in
// this order: the kubeconfig file at path (the --kubeconfig flag), the
// files in $KUBECONFIG, the in-cluster service account, and
// ~/.kube/config. QPS and Burst default to 50 and 100: an operator's
// reads come from its caches, and client-go's 5 and 10 throttle the
// writes of a busy controller.
func LoadConfig(path string) (*rest.Config, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	return cfg, nil
}

func loadConfig(path string) (*rest.Config, error) {
	if path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("runtime: load kubeconfig %s: %w", path, err)
		}
		return cfg, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("runtime: no cluster to talk to: pass --kubeconfig, set KUBECONFIG, run in a Pod, or write ~/.kube/config (%w)", err)
	}
	return cfg, nil
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// kubeconfigNamespace is the namespace of the current kubeconfig context
// (KUBECONFIG or ~/.kube/config), "default" when the context names none,
// as kubectl does; ok is false when there is no kubeconfig or no current
// context.
func kubeconfigNamespace() (ns string, ok bool) {
	raw, err := clientcmd.NewDefaultClientConfigLoadingRules().Load()
	if err != nil || raw == nil || raw.Contexts[raw.CurrentContext] == nil {
		return "", false
	}
	if ns = raw.Contexts[raw.CurrentContext].Namespace; ns == "" {
		ns = metav1.NamespaceDefault
	}
	return ns, true
}
