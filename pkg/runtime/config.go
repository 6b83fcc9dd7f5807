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

// The client limits an operator runs with when neither its REST config nor
// Options set them. An operator's reads come from its caches, so these
// limit its writes; client-go's own 5 and 10 throttle a busy controller.
// docs/reliability.md gives the measurement they come from.
const (
	DefaultKubeAPIQPS   float32 = 50
	DefaultKubeAPIBurst int     = 100
)

// LoadConfig returns the REST config to run an operator with, looked up in
// this order: the kubeconfig file at path (the --kubeconfig flag), the
// files in $KUBECONFIG, the in-cluster service account, and
// ~/.kube/config. QPS and Burst are left as found (New applies the
// defaults).
func LoadConfig(path string) (*rest.Config, error) {
	return loadConfig(path)
}

// clientLimits applies Options.KubeAPIQPS and KubeAPIBurst to cfg, then
// the defaults where cfg sets nothing.
func clientLimits(cfg *rest.Config, opts Options) {
	if opts.KubeAPIQPS != 0 {
		cfg.QPS = opts.KubeAPIQPS
	}
	if opts.KubeAPIBurst != 0 {
		cfg.Burst = opts.KubeAPIBurst
	}
	if cfg.QPS == 0 {
		cfg.QPS = DefaultKubeAPIQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = max(DefaultKubeAPIBurst, int(cfg.QPS))
	}
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
