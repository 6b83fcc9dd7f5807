package testenv

import (
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context in the kubeconfig.
const contextName = "opgen-local"

func (e *Environment) adminConfig(host string) *rest.Config {
	return &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   e.creds.caPEM,
			CertData: e.creds.adminCertPEM,
			KeyData:  e.creds.adminKeyPEM,
		},
		// Tests and benchmarks create objects in bursts; client-go's
		// defaults (5 QPS) would make the client the bottleneck.
		QPS:   1000,
		Burst: 2000,
	}
}

func (e *Environment) writeKubeconfig() error {
	e.Kubeconfig = filepath.Join(e.Dir, "kubeconfig")
	return e.WriteKubeconfig(e.Config, e.Kubeconfig)
}

// WriteKubeconfig writes a kubeconfig for cfg (for example one from
// ServiceAccountConfig) to path, so that a separate process, such as an
// operator binary or kubectl, can act as that identity.
func (e *Environment) WriteKubeconfig(cfg *rest.Config, path string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters[contextName] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos[contextName] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Impersonate:           cfg.Impersonate.UserName,
		ImpersonateGroups:     cfg.Impersonate.Groups,
	}
	c.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	c.CurrentContext = contextName
	return clientcmd.WriteToFile(*c, path)
}
