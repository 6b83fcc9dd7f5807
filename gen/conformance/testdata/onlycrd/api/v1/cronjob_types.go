package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	// Schedule is in Cron format.
	Schedule string `json:"schedule"`

	// Internal is not serialized: it is in no schema.
	Internal map[string]any `json:"-"`

	// hidden is unexported.
	hidden string
}

// CronJob runs a job on a schedule.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CronJobSpec `json:"spec"`
}

var _ = CronJobSpec{}.hidden
