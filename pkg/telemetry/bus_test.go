package telemetry_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// A subscriber that panics does not break the emitter or the other
// subscribers; OnPanic hears of it.
func TestPanickingSubscriber(t *testing.T) {
	var b telemetry.Bus
	var panics, seen int
	b.OnPanic = func(telemetry.Event, any) { panics++ }
	telemetry.On(&b, func(telemetry.Event) { panic("boom") })
	unsubscribe := telemetry.On(&b, func(telemetry.TaskRan) { seen++ })
	b.Emit(telemetry.TaskRan{Task: "t"})
	b.Emit(telemetry.TaskStopped{Task: "t"})
	unsubscribe()
	b.Emit(telemetry.TaskRan{Task: "t"})
	assert.Equal(t, 3, panics)
	assert.Equal(t, 1, seen, "On delivers only its type, until unsubscribed")
}

// Subscribers are called in the order they subscribed, and may subscribe
// and unsubscribe while others emit.
func TestOrderAndConcurrency(t *testing.T) {
	var b telemetry.Bus
	var mu sync.Mutex
	var got []string
	for i := range 3 {
		telemetry.On(&b, func(e telemetry.Event) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%d:%s", i, e.Name()))
			mu.Unlock()
		})
	}
	b.Emit(telemetry.LeaderAcquired{})
	assert.Equal(t, []string{"0:leader.acquired", "1:leader.acquired", "2:leader.acquired"}, got)

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				stop := telemetry.On(&b, func(telemetry.Event) {})
				b.Emit(telemetry.TaskRan{})
				stop()
			}
		})
	}
	wg.Wait()
	var nilBus *telemetry.Bus
	nilBus.Emit(telemetry.TaskRan{}) // a nil Bus drops events
}

// Subscribe to the failures of every controller; in an operator the bus
// is op.Telemetry().
func ExampleOn() {
	var bus telemetry.Bus // op.Telemetry() in an operator
	telemetry.On(&bus, func(e telemetry.ReconcileFailed) {
		fmt.Printf("%s failed on %s: %v (terminal: %t)\n", e.Controller, e.Key, e.Err, e.Terminal)
	})
	bus.Emit(telemetry.ReconcileFailed{
		Reconcile: telemetry.Reconcile{Controller: "greeting", Key: cache.ObjectName{Namespace: "default", Name: "hello"}, Verb: "Add"},
		Err:       errors.New("quota exceeded"),
	})
	bus.Emit(telemetry.ReconcileSucceeded{}) // not a failure: not delivered
	// Output: greeting failed on default/hello: quota exceeded (terminal: false)
}

// A subscriber to Event receives every event; switch on its type.
func ExampleOn_everyEvent() {
	var bus telemetry.Bus
	unsubscribe := telemetry.On(&bus, func(e telemetry.Event) {
		switch e := e.(type) {
		case telemetry.BindSucceeded:
			fmt.Println("bound", e.Pod, "to", e.Node)
		case telemetry.LeaderLost:
			fmt.Println("lost the lease, graceful:", e.Graceful)
		}
	})
	defer unsubscribe()
	bus.Emit(telemetry.BindSucceeded{Binding: telemetry.Binding{Scheduler: "cheap", Pod: cache.ObjectName{Namespace: "ns", Name: "web"}}, Node: "n1"})
	bus.Emit(telemetry.LeaderLost{Graceful: true})
	// Output:
	// bound ns/web to n1
	// lost the lease, graceful: true
}
