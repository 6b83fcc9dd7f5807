package telemetry

import (
	"sync"
	"sync/atomic"
)

// Bus delivers events to its subscribers. The zero value is ready to use;
// every Operator has one (Operator.Telemetry).
type Bus struct {
	// OnPanic, when set, is told about a subscriber that panicked; the
	// panic is recovered either way.
	OnPanic func(e Event, recovered any)

	mu   sync.Mutex
	next uint64
	subs atomic.Pointer[[]subscription] // copy-on-write: Emit takes no lock
}

type subscription struct {
	id uint64
	f  func(Event)
}

// On subscribes f to the events of type E and returns a function that
// removes it. E is one event type, or Event itself for every event:
//
//	telemetry.On(bus, func(e telemetry.BindFailed) { ... })
//	telemetry.On(bus, func(e telemetry.Event) { log(e.Name()) })
//
// f is called for every matching event emitted from then on,
// synchronously, on the emitting goroutine: it must be fast and must not
// block.
func On[E Event](b *Bus, f func(E)) (unsubscribe func()) {
	return b.add(func(e Event) {
		if typed, ok := e.(E); ok {
			f(typed)
		}
	})
}

func (b *Bus) add(f func(Event)) (unsubscribe func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	id := b.next
	subs := append(b.load(), subscription{id: id, f: f})
	b.subs.Store(&subs)
	return func() { b.remove(id) }
}

func (b *Bus) remove(id uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var subs []subscription
	for _, s := range b.load() {
		if s.id != id {
			subs = append(subs, s)
		}
	}
	b.subs.Store(&subs)
}

func (b *Bus) load() []subscription {
	if p := b.subs.Load(); p != nil {
		return *p
	}
	return nil
}

// Emit delivers e to every subscriber, in the order they subscribed. A nil
// Bus drops the event.
func (b *Bus) Emit(e Event) {
	if b == nil {
		return
	}
	for _, s := range b.load() {
		b.deliver(s.f, e)
	}
}

func (b *Bus) deliver(f func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil && b.OnPanic != nil {
			b.OnPanic(e, r)
		}
	}()
	f(e)
}
