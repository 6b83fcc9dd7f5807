package gen

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/opgen-sdk/opgen/gen/diag"
)

// RunError is what a failed run returns: every error it found. Nothing
// was written but the stubs in Wrote, unless WroteOutput says so.
type RunError struct {
	Errors []*diag.Error
	// Wrote are the stubs the run created (Output.Stub), for the user to
	// complete.
	Wrote []string
	// WroteOutput says that the run wrote its whole output: its only
	// errors were functions to write, which stubs answer (Errors.AddStub).
	WroteOutput bool
}

func (r *RunError) Error() string {
	var b strings.Builder
	for _, e := range r.Errors {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	switch {
	case r.WroteOutput && len(r.Wrote) > 0:
		fmt.Fprintf(&b, "%d error(s); the generated files are written, with stubs in %s that build and return an error until you complete them", len(r.Errors), strings.Join(r.Wrote, ", "))
	case r.WroteOutput:
		fmt.Fprintf(&b, "%d error(s); the generated files are written, and the stubs build and return an error until you complete them", len(r.Errors))
	case len(r.Wrote) == 0:
		fmt.Fprintf(&b, "%d error(s); nothing was written", len(r.Errors))
	default:
		fmt.Fprintf(&b, "%d error(s); nothing was written but %s", len(r.Errors), strings.Join(r.Wrote, ", "))
	}
	return b.String()
}

// Relative returns a copy of r with file names relative to dir, as a user
// running opgen in dir would type them.
func (r *RunError) Relative(dir string) *RunError {
	out := &RunError{Errors: make([]*diag.Error, len(r.Errors)), WroteOutput: r.WroteOutput}
	for _, w := range r.Wrote {
		if rel, err := filepath.Rel(dir, w); err == nil && !strings.HasPrefix(rel, "..") {
			w = rel
		}
		out.Wrote = append(out.Wrote, w)
	}
	for i, e := range r.Errors {
		c := *e
		c.Msg = strings.ReplaceAll(c.Msg, dir+string(filepath.Separator), "")
		if rel, err := filepath.Rel(dir, c.Pos.Filename); err == nil && c.Pos.Filename != "" && !strings.HasPrefix(rel, "..") {
			c.Pos.Filename = rel
		}
		out.Errors[i] = &c
	}
	return out
}

// runError returns nil when errs recorded nothing, or a RunError with every
// error, sorted by position.
func runError(errs *diag.Errors) error {
	list := errs.List()
	if len(list) == 0 {
		return nil
	}
	return &RunError{Errors: list}
}
