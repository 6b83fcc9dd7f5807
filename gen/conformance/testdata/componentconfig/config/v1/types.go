package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Configuration is the operator's configuration file.
// +kubebuilder:object:root=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// ClientConnection is how the operator talks to the API server.
	ClientConnection ClientConnection `json:"clientConnection"`
	// Namespace is where the operator runs.
	Namespace string `json:"namespace,omitempty"`
	// Workers is how many objects the operator handles at once.
	Workers int32 `json:"workers,omitempty"`
}

// ClientConnection configures the operator's client.
type ClientConnection struct {
	// QPS is how many requests a second the client sends: a float, as
	// client-go takes it.
	QPS float32 `json:"qps,omitempty"`
	// Burst is how many requests above QPS the client may send at once.
	Burst int32 `json:"burst,omitempty"`
}
