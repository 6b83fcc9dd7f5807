package gen

import (
	"errors"
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Error is a problem in the user's code: where it is and how to fix it.
type Error struct {
	// Pos is the file, line and column; Filename is empty when the error
	// has no place in a file.
	Pos token.Position
	// Msg says what is wrong and how to fix it.
	Msg string
}

func (e *Error) Error() string {
	if e.Pos.Filename == "" {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Errors collects every problem a run finds, so that all of them are
// reported together. It is safe for concurrent use. Every distinct error is
// kept, several at one position included; an error repeated with the same
// position and message is one. An error of a library (controller-tools'
// marker collector or generators, the go command) on a line where opgen
// reported its own error is dropped: opgen's checks run first so that
// their message, with the fix, replaces a library's less helpful one about
// the same marker or field.
type Errors struct {
	mu   sync.Mutex
	list []*Error
	// library marks the errors that came from a library.
	library map[*Error]bool
	// stubs marks the errors that stubs answer (AddStub).
	stubs map[*Error]bool
	seen  map[Error]bool
}

// Add records an error at pos.
func (e *Errors) Add(pos token.Position, format string, args ...any) {
	e.add(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}, false, false)
}

// AddStub records an error at pos that a stub answers: a function the
// user must write, which the run stubbed (Output.Stub) or which is still
// the stub of an earlier run. The output builds with the stubs, which
// fail at run time; a run whose errors are all stub errors writes its
// output (see Run).
func (e *Errors) AddStub(pos token.Position, format string, args ...any) {
	e.add(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}, false, true)
}

// OnlyStubs reports whether every error recorded is a stub error.
func (e *Errors) OnlyStubs() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, err := range e.kept() {
		if !e.stubs[err] {
			return false
		}
	}
	return len(e.list) > 0
}

// AddErr records err; positioned errors (*Error, or a list from errors.Join)
// keep their positions.
func (e *Errors) AddErr(err error) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, err := range joined.Unwrap() {
			e.AddErr(err)
		}
		return
	}
	var pe *Error
	if errors.As(err, &pe) {
		e.add(pe, false, false)
		return
	}
	e.add(&Error{Msg: err.Error()}, false, false)
}

// addLibrary records an error a library reported at pos, which gives way
// to opgen's own errors on the same line.
func (e *Errors) addLibrary(pos token.Position, msg string) {
	e.add(&Error{Pos: pos, Msg: msg}, true, false)
}

func (e *Errors) add(err *Error, library, stub bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen == nil {
		e.seen = map[Error]bool{}
		e.library = map[*Error]bool{}
		e.stubs = map[*Error]bool{}
	}
	if e.seen[*err] {
		return
	}
	e.seen[*err] = true
	e.list = append(e.list, err)
	e.library[err] = library
	e.stubs[err] = stub
}

// kept returns the errors to report: all but the library errors on a line
// that has one of opgen's.
func (e *Errors) kept() []*Error {
	own := map[fileLine]bool{}
	for _, err := range e.list {
		if !e.library[err] && err.Pos.Filename != "" {
			own[fileLine{err.Pos.Filename, err.Pos.Line}] = true
		}
	}
	var out []*Error
	for _, err := range e.list {
		if e.library[err] && own[fileLine{err.Pos.Filename, err.Pos.Line}] {
			continue
		}
		out = append(out, err)
	}
	return out
}

type fileLine struct {
	file string
	line int
}

// Len returns how many errors were recorded.
func (e *Errors) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.list)
}

// Err returns nil when nothing was recorded, or a RunError with every
// error, sorted by position.
func (e *Errors) Err() error {
	list := e.List()
	if len(list) == 0 {
		return nil
	}
	return &RunError{Errors: list}
}

// List returns the errors to report, sorted by position.
func (e *Errors) List() []*Error {
	e.mu.Lock()
	defer e.mu.Unlock()
	list := e.kept()
	sort.SliceStable(list, func(i, j int) bool { return less(list[i].Pos, list[j].Pos) })
	return list
}

func less(a, b token.Position) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Column < b.Column
}

// RunError is what a failed run returns: every error it found. Nothing
// was written but the stubs in Wrote, unless WroteOutput says so.
type RunError struct {
	Errors []*Error
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
	out := &RunError{Errors: make([]*Error, len(r.Errors)), WroteOutput: r.WroteOutput}
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
