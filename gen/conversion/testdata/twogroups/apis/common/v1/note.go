// Package v1 holds a type the v1 kinds of two groups share.
package v1

// Note is a note.
type Note struct {
	Text string `json:"text"`
}
