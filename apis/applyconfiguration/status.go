// Package applyconfiguration holds the server-side apply configuration of
// apis.Status. The apply configurations opgen generates for a status that
// embeds apis.Status embed StatusApplyConfiguration, so that
// WithObservedGeneration and WithConditions work on them as on any field.
package applyconfiguration

import (
	metav1 "k8s.io/client-go/applyconfigurations/meta/v1"
)

// StatusApplyConfiguration is the apply configuration of apis.Status.
type StatusApplyConfiguration struct {
	ObservedGeneration *int64                               `json:"observedGeneration,omitempty"`
	Conditions         []metav1.ConditionApplyConfiguration `json:"conditions,omitempty"`
}

// Status returns an empty StatusApplyConfiguration.
func Status() *StatusApplyConfiguration {
	return &StatusApplyConfiguration{}
}

// WithObservedGeneration sets ObservedGeneration and returns the receiver.
func (b *StatusApplyConfiguration) WithObservedGeneration(value int64) *StatusApplyConfiguration {
	b.ObservedGeneration = &value
	return b
}

// WithConditions appends values to Conditions and returns the receiver.
func (b *StatusApplyConfiguration) WithConditions(values ...*metav1.ConditionApplyConfiguration) *StatusApplyConfiguration {
	for _, v := range values {
		if v == nil {
			panic("nil value passed to WithConditions")
		}
		b.Conditions = append(b.Conditions, *v)
	}
	return b
}
