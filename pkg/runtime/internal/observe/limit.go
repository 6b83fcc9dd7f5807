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
	pending    []any         // values for next, not given to it yet
	action     *actionValues // more, after pending (see WithAction)
	state      *limitState
	name       string
	controller string
}

// actionValues are the values of one action's logger, kept as strings
// until a line is written.
type actionValues struct{ namespace, name, verb, id string }

// WithAction returns log with the values of one action: its object's
// namespace and name, its verb and its reconcileID. It is
// log.WithValues("namespace", namespace, "name", name, "verb", verb,
// "reconcileID", id), which, on the runtime's logger, allocates once
// instead of eight times: most actions write no line, and boxing the
// values cost a sixth of the allocations of a no-op action.
func WithAction(log logr.Logger, namespace, name, verb, id string) logr.Logger {
	l, ok := log.GetSink().(*limitSink)
	if !ok || l.action != nil {
		return log.WithValues("namespace", namespace, "name", name, "verb", verb, "reconcileID", id)
	}
	c := struct {
		s limitSink
		v actionValues
	}{*l, actionValues{namespace, name, verb, id}}
	c.s.action = &c.v
	return log.WithSink(&c.s)
}

// values returns the pending values and the action's, in that order.
func (l *limitSink) values() []any {
	if l.action == nil {
		return l.pending
	}
	v := l.action
	return append(l.pending[:len(l.pending):len(l.pending)], "namespace", v.namespace, "name", v.name, "verb", v.verb, "reconcileID", v.id)
}

// sink is next with the pending values.
func (l *limitSink) sink() logr.LogSink {
	if len(l.pending) == 0 && l.action == nil {
		return l.next
	}
	return l.next.WithValues(l.values()...)
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
	v := l.values()
	c.pending, c.action = append(v[:len(v):len(v)], kvs...), nil
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
	c.next, c.pending, c.action = l.sink().WithName(name), nil, nil
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
