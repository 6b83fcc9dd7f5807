package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// LoadSpec is shaped like a small workload: about 2 KiB of JSON in the
// objects the benchmark creates, with nested lists and maps so that
// managedFields are as large as they are on real objects.
type LoadSpec struct {
	// Image is a container image reference.
	Image string `json:"image"`
	// Replicas is a desired count.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Command is a command line.
	// +optional
	Command []string `json:"command,omitempty"`
	// Env are environment variables.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []EnvVar `json:"env,omitempty"`
	// Ports are named ports.
	// +optional
	// +listType=map
	// +listMapKey=name
	Ports []Port `json:"ports,omitempty"`
	// Config is free-form configuration.
	// +optional
	Config map[string]string `json:"config,omitempty"`
	// Description is free text.
	// +optional
	Description string `json:"description,omitempty"`
}

// EnvVar is a named value.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Port is a named port.
type Port struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}

// LoadStatus is what the operators under test write.
type LoadStatus struct {
	apis.Status `json:",inline"`
	// Phase is a short state.
	// +optional
	Phase string `json:"phase,omitempty"`
	// Heartbeat changes on every reconcile of the status-writing mode, so
	// that each reconcile makes one status write.
	// +optional
	Heartbeat int64 `json:"heartbeat,omitempty"`
}

// Load is the benchmark's kind.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +opgen:controller:owns=v1.ConfigMap
// +opgen:controller:cacheSpec=image;replicas;config
type Load struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LoadSpec `json:"spec"`
	// +optional
	Status LoadStatus `json:"status,omitempty"`
}

// LoadList is a list of Loads.
//
// +kubebuilder:object:root=true
type LoadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Load `json:"items"`
}
