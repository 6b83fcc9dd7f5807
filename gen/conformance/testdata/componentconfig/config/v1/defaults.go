package v1

import "k8s.io/apimachinery/pkg/runtime"

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

var _ = addDefaultingFuncs

// SetDefaults_ClientConnection sets the client's defaults.
func SetDefaults_ClientConnection(c *ClientConnection) {
	if c.QPS == 0 {
		c.QPS = 20
	}
}
