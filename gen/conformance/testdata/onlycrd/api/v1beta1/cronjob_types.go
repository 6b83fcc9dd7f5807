// Package v1beta1 holds the CronJob's older version, also marked the
// storage version, as a project on its way from one to the other may
// leave it: controller-gen writes both stored.
// +groupName=testdata.kubebuilder.io
package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	// Schedule is in Cron format.
	Schedule string `json:"schedule"`
}

// CronJob runs a job on a schedule.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CronJobSpec `json:"spec"`
}
