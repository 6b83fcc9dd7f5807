package observe

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
)

// Repeated error lines of one controller are written once a window, the
// next one with the count suppressed; other controllers, other messages
// and info lines pass; client-go's info lines are limited too.
func TestLimitRepeats(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	base := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, prefix+" "+args)
		mu.Unlock()
	}, funcr.Options{})
	log := base.WithSink(LimitRepeats(base.GetSink(), 100*time.Millisecond)).WithName("op")
	a, b := log.WithValues("controller", "a"), log.WithValues("controller", "b")
	boom := errors.New("connection refused")
	for range 50 {
		a.Error(boom, "handler failed")
		b.Error(boom, "handler failed")
		a.Info("handled")
		log.WithName("client-go").Info("Warning: watch ended with error")
	}
	time.Sleep(150 * time.Millisecond)
	a.Error(boom, "handler failed")
	count := func(part string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, l := range lines {
			if strings.Contains(l, part) {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 3, count("handler failed"), "once per controller, and once more after the window")
	assert.Equal(t, 1, count(`"suppressed"=49`), "the count of what was left out")
	assert.Equal(t, 50, count("handled"), "info lines pass")
	assert.Equal(t, 1, count("watch ended"), "client-go's repeats are limited")
}

// The values given to WithValues are written with every line, in their
// order, around a WithName, and the caller is the line's (as the runtime
// wraps a user's logger), though the sink hands them on only when a line
// is written.
func TestLimitSinkValues(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{LogCaller: funcr.All})
	log := base.WithSink(LimitRepeats(base.GetSink(), time.Minute)).WithValues("a", 1).WithName("op").WithValues("b", 2)
	log.Info("one", "c", 3)
	log.WithValues("d", 4).Error(errors.New("boom"), "two")
	log.V(1).Info("not enabled")
	if assert.Len(t, lines, 2) {
		assert.Regexp(t, `^op "caller"=\{"file"="limit_test.go" "line"=\d+\} "level"=0 "msg"="one" "a"=1 "b"=2 "c"=3$`, lines[0])
		assert.Regexp(t, `^op "caller"=\{"file"="limit_test.go" "line"=\d+\} "msg"="two" "error"="boom" "a"=1 "b"=2 "d"=4$`, lines[1])
	}
}

// WithAction writes what WithValues with the same values writes, with
// values and names added after it, and allocates once on the runtime's
// logger.
func TestWithAction(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{LogCaller: funcr.All})
	newLog := func() logr.Logger { // each with its own limit on repeats
		return base.WithSink(LimitRepeats(base.GetSink(), time.Minute)).WithName("op").WithValues("controller", "gadget")
	}
	write := func(l logr.Logger) {
		l.Info("one", "c", 3)
		l.WithValues("d", 4).Error(errors.New("boom"), "two")
		l.WithName("step").Info("three")
	}
	write(WithAction(newLog(), "ns", "a", "Add", "7"))
	got := lines
	lines = nil
	write(newLog().WithValues("namespace", "ns", "name", "a", "verb", "Add", "reconcileID", "7"))
	assert.Len(t, got, 3)
	assert.Equal(t, lines, got)
	assert.Contains(t, got[0], `"controller"="gadget" "namespace"="ns" "name"="a" "verb"="Add" "reconcileID"="7" "c"=3`)

	lines = nil
	write(WithAction(WithAction(newLog(), "ns", "a", "Add", "7"), "ns2", "b", "Modify", "8"))
	assert.Contains(t, lines[0], `"verb"="Add" "reconcileID"="7" "namespace"="ns2" "name"="b" "verb"="Modify" "reconcileID"="8"`, "on a logger with an action's values, WithAction adds the others after them")

	log := newLog()
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { WithAction(log, "ns", "a", "Add", "7") }))
}
