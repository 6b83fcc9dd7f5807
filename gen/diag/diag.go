// Package diag holds the problems a run of opgen generate finds in the
// user's code: each with its file:line:col and how to fix it, collected so
// that all of them are reported together. The API model (gen/model) and
// the run engine (gen) both record into it.
package diag

import (
	"errors"
	"fmt"
	"go/token"
	"sort"
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

// AddLibrary records an error a library reported at pos, which gives way
// to opgen's own errors on the same line.
func (e *Errors) AddLibrary(pos token.Position, msg string) {
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

// List returns the errors to report, sorted by position.
func (e *Errors) List() []*Error {
	e.mu.Lock()
	defer e.mu.Unlock()
	list := e.kept()
	sort.SliceStable(list, func(i, j int) bool { return Before(list[i].Pos, list[j].Pos) })
	return list
}

// Before reports whether position a comes before b: by file, line and
// column, the order errors are reported in.
func Before(a, b token.Position) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Column < b.Column
}
