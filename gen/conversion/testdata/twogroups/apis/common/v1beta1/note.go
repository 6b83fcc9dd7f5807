// Package v1beta1 holds a type the v1beta1 kinds of two groups share.
package v1beta1

// Note is a note, with the field named differently than in v1.
type Note struct {
	Body string `json:"body"`
}
