package observe

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// LimitRepeats returns a sink that writes an error line (and a line of
// client-go's own, under the logger name "client-go") at most once every
// every, for each logger name, controller and message, and counts the
// others: the next line written carries "suppressed", the count. During
// an outage every action of a controller fails the same way, and
// client-go's event writer retries each Event; their lines would bury
// everything else.
//
// sink is the sink of a logger, initialized already: give the result to
// that logger's WithSink. The sink is told of the frame this one adds, so
// that a line's caller is the code that wrote it.
func LimitRepeats(sink logr.LogSink, every time.Duration) logr.LogSink {
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1) // this sink's own frame
	}
	return &limitSink{next: sink, state: &limitState{every: every, last: map[limitKey]limitEntry{}}}
}

type limitState struct {
	every time.Duration
	mu    sync.Mutex
	last  map[limitKey]limitEntry
}

type limitKey struct{ name, controller, msg string }

type limitEntry struct {
	at         time.Time
	suppressed int
}

// allow reports whether to write the line of key now, and how many were
// suppressed since the last one written.
func (s *limitState) allow(key limitKey) (bool, int) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, seen := s.last[key]
	if seen && now.Sub(e.at) < s.every {
		e.suppressed++
		s.last[key] = e
		return false, 0
	}
	if len(s.last) > 4096 { // keys of the past: no map grows without bound
		clear(s.last)
	}
	s.last[key] = limitEntry{at: now}
	return true, e.suppressed
}

// limitSink also defers the values given to WithValues until a line is
// written: the runtime makes a logger with an action's values for every
// action, and most actions write no line. A handler of slog formats the
// values it is given at once.
type limitSink struct {
	next       logr.LogSink
	pending    []any // values for next, not given to it yet
	state      *limitState
	name       string
	controller string
}

// sink is next with the pending values.
func (l *limitSink) sink() logr.LogSink {
	if len(l.pending) == 0 {
		return l.next
	}
	return l.next.WithValues(l.pending...)
}

var _ logr.CallDepthLogSink = (*limitSink)(nil)

// Init does nothing: the sink LimitRepeats wraps was initialized by its
// own logger, and told of this sink's frame.
func (l *limitSink) Init(logr.RuntimeInfo) {}

func (l *limitSink) Enabled(level int) bool { return l.next.Enabled(level) }

func (l *limitSink) Info(level int, msg string, kvs ...any) {
	if level == 0 && l.fromClientGo() {
		ok, n := l.state.allow(limitKey{l.name, l.controller, msg})
		if !ok {
			return
		}
		kvs = withSuppressed(kvs, n)
	}
	l.sink().Info(level, msg, kvs...)
}

func (l *limitSink) Error(err error, msg string, kvs ...any) {
	ok, n := l.state.allow(limitKey{l.name, l.controller, msg})
	if !ok {
		return
	}
	l.sink().Error(err, msg, withSuppressed(kvs, n)...)
}

func (l *limitSink) fromClientGo() bool {
	return len(l.name) >= len("client-go") && l.name[len(l.name)-len("client-go"):] == "client-go"
}

func withSuppressed(kvs []any, n int) []any {
	if n == 0 {
		return kvs
	}
	return append(kvs, "suppressed", n)
}

func (l *limitSink) WithValues(kvs ...any) logr.LogSink {
	c := *l
	c.pending = append(l.pending[:len(l.pending):len(l.pending)], kvs...)
	for i := 0; i+1 < len(kvs); i += 2 {
		if k, ok := kvs[i].(string); ok && k == "controller" {
			if v, ok := kvs[i+1].(string); ok {
				c.controller = v
			}
		}
	}
	return &c
}

func (l *limitSink) WithName(name string) logr.LogSink {
	c := *l
	c.next, c.pending = l.sink().WithName(name), nil
	if c.name == "" {
		c.name = name
	} else {
		c.name += "/" + name
	}
	return &c
}

func (l *limitSink) WithCallDepth(depth int) logr.LogSink {
	c := *l
	if cd, ok := l.next.(logr.CallDepthLogSink); ok {
		c.next = cd.WithCallDepth(depth)
	}
	return &c
}
