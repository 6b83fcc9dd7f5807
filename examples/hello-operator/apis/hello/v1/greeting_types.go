package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Greeting runs a small web server that answers every request with a
// greeting: a Deployment of two replicas and a Service on port 5000.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gr,categories=hello
// +kubebuilder:printcolumn:name=Greeting,type=string,JSONPath=.spec.greeting
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
// +opgen:controller
// +opgen:controller:owns=apps/v1.Deployment;v1.Service
// +opgen:controller:namesOwned
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GreetingSpec   `json:"spec"`
	Status GreetingStatus `json:"status,omitempty"`
}

// GreetingSpec is what the user asks for.
type GreetingSpec struct {
	// Greeting is the text the server answers with.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Greeting string `json:"greeting"`
}

// GreetingStatus is what the operator observed.
type GreetingStatus struct {
	apis.Status `json:",inline"`

	// ReadyReplicas is the number of server replicas that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// URL is the in-cluster address of the greeting server.
	// +optional
	URL string `json:"url,omitempty"`
}

// GreetingList is a list of Greetings.
//
// +kubebuilder:object:root=true
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}
