package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Configuration is the operator's configuration file. Its defaulters
// are asked for here, not in doc.go: defaulter-gen v0.37 reads the
// package tag first and writes none, older releases wrote them.
// +k8s:defaulter-gen=true
// +kubebuilder:object:root=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// ClientConnection is how the operator talks to the API server.
	ClientConnection ClientConnection `json:"clientConnection"`
	// Namespace is where the operator runs.
	Namespace string `json:"namespace,omitempty"`
	// Threads is what v1 calls Workers.
	Threads int32 `json:"threads,omitempty"`
}

// ClientConnection configures the operator's client.
type ClientConnection struct {
	// QPS is how many requests a second the client sends: a float, as
	// client-go takes it.
	QPS float32 `json:"qps,omitempty"`
	// Burst is how many requests above QPS the client may send at once.
	Burst int32 `json:"burst,omitempty"`
}
