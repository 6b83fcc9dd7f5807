package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// ScheduleSpec is the desired state of a Schedule.
type ScheduleSpec struct {
	// Every is the time between two runs.
	Every metav1.Duration `json:"every"`
	// HistoryLimit is how many Jobs of past runs to keep.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +optional
	HistoryLimit int32 `json:"historyLimit,omitempty"`
	// JobTemplate is the Job each run creates.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`
	// Suspend stops the runs; the Jobs of past runs stay.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// ScheduleStatus is the observed state of a Schedule.
type ScheduleStatus struct {
	// Status records the observed generation and the conditions.
	apis.Status `json:",inline"`
	// LastRun is the time of the last run whose Job was created.
	// +optional
	LastRun *metav1.Time `json:"lastRun,omitempty"`
	// Jobs are the names of the Jobs kept, newest first.
	// +optional
	Jobs []string `json:"jobs,omitempty"`
}

// Schedule runs a Job from its template every Every, and keeps the Jobs
// of the last HistoryLimit runs.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +opgen:controller
// +opgen:controller:owns=batch/v1.Job
// +opgen:controller:retain=batch/v1.Job
type Schedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ScheduleSpec   `json:"spec"`
	Status ScheduleStatus `json:"status,omitempty"`
}

// ScheduleList is a list of Schedule objects.
//
// +kubebuilder:object:root=true
type ScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Schedule `json:"items"`
}
