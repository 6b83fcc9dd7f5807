package gen

import (
	"errors"
	"go/token"
	"testing"

	"github.com/opgen-sdk/opgen/gen/diag"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorsKeepsEveryDistinctError: two problems at one position are two
// errors (controller-gen reports both); a repeated one is one; a library's
// error on a line where opgen reported its own gives way to opgen's.
func TestErrorsKeepsEveryDistinctError(t *testing.T) {
	t.Parallel()
	pos := token.Position{Filename: "/p/types.go", Line: 7, Column: 6}
	var errs diag.Errors
	errs.Add(pos, "first")
	errs.Add(pos, "second")
	errs.Add(pos, "first")
	errs.AddLibrary(token.Position{Filename: "/p/types.go", Line: 7, Column: 1}, "the library's take")
	errs.AddLibrary(token.Position{Filename: "/p/types.go", Line: 9, Column: 1}, "only the library saw this")
	errs.AddLibrary(pos, "only the library saw this")
	var runErr *RunError
	require.True(t, errors.As(runError(&errs), &runErr))
	var msgs []string
	for _, e := range runErr.Errors {
		msgs = append(msgs, e.Error())
	}
	assert.Equal(t, []string{
		"/p/types.go:7:6: first",
		"/p/types.go:7:6: second",
		"/p/types.go:9:1: only the library saw this",
	}, msgs)
}

func TestPanicFrameNamesThePanickingFunction(t *testing.T) {
	t.Parallel()
	stack := "goroutine 1 [running]:\nruntime/debug.Stack()\n\t/go/src/runtime/debug/stack.go:26 +0x5e\n" +
		"panic({0x1, 0x2})\n\t/go/src/runtime/panic.go:783 +0x132\n" +
		"runtime.panicmem(...)\n\t/go/src/runtime/panic.go:262\n" +
		"go/types.(*Package).Path(0x0)\n\t/go/src/go/types/package.go:34 +0x4\n"
	assert.Equal(t, "go/types.(*Package).Path /go/src/go/types/package.go:34", panicFrame([]byte(stack)))
	assert.Equal(t, "unknown function", panicFrame([]byte("nothing")))
}
