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
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   e.Config.Host,
		CertificateAuthorityData: e.creds.caPEM,
	}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: e.creds.adminCertPEM,
		ClientKeyData:         e.creds.adminKeyPEM,
	}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
	cfg.CurrentContext = contextName
	e.Kubeconfig = filepath.Join(e.Dir, "kubeconfig")
	return clientcmd.WriteToFile(*cfg, e.Kubeconfig)
}
