package lanes

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// TestTriggersMergeUntilTaken: the wakes of one key merge, one per kind
// and object, the latest of each, with the union of an echo's fields; a
// delayed trigger joins the first action that begins once it is due; a
// change is settled when the key is taken.
func TestTriggersMergeUntilTaken(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	settled := 0
	k := New(Config{Name: "t", Clock: clk, RateLimiter: workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		Urgent: func(cache.ObjectName) bool { return false },
		Settle: func(u Update) telemetry.Trigger {
			settled++
			assert.Equal(t, []string{"5", "6"}, u.Versions, "the versions of the merged changes")
			assert.Equal(t, "old", u.Old)
			assert.Equal(t, "newest", u.New)
			return telemetry.Trigger{Kind: telemetry.TriggerEcho, Fields: []string{"spec.b"}}
		}})
	defer k.ShutDown()
	key := cache.ObjectName{Namespace: "ns", Name: "a"}
	k.Wake(key, telemetry.Trigger{Kind: telemetry.TriggerOwned, Object: "ConfigMap ns/x", ResourceVersion: "3"})
	k.Wake(key, telemetry.Trigger{Kind: telemetry.TriggerOwned, Object: "ConfigMap ns/x", ResourceVersion: "4"})
	k.Wake(key, telemetry.Trigger{Kind: telemetry.TriggerEcho, Fields: []string{"spec.a"}})
	k.WakeUpdate(key, Update{Trigger: telemetry.Trigger{Kind: telemetry.TriggerChange, ResourceVersion: "5"}, Versions: []string{"5"}, Old: "old", New: "new"})
	k.WakeUpdate(key, Update{Trigger: telemetry.Trigger{Kind: telemetry.TriggerChange, ResourceVersion: "6"}, Versions: []string{"6"}, Old: "new", New: "newest"})
	k.After(key, time.Minute, telemetry.Trigger{Kind: telemetry.TriggerPeriodic})

	got := k.Triggers(key)
	assert.Equal(t, 1, settled)
	assert.Equal(t, "owned(ConfigMap ns/x rv 4), echo(fields spec.a,spec.b)", got.String())
	assert.Empty(t, k.Triggers(key), "taken once")

	clk.Step(time.Minute)
	assert.Equal(t, "periodic", k.Triggers(key).String(), "due now")
	k.Retry(key)
	assert.Equal(t, telemetry.Triggers{{Kind: telemetry.TriggerRetry}}, k.Triggers(key))
}

// TestWakeChoosesTheLane: a wake lands in the lane its kind of trigger
// belongs to: someone's change in the user lane, ticks, retries and the
// initial list in the bulk lane.
func TestWakeChoosesTheLane(t *testing.T) {
	for kind, want := range map[telemetry.TriggerKind]string{
		telemetry.TriggerChange: "user", telemetry.TriggerOwned: "user", telemetry.TriggerWatched: "user",
		telemetry.TriggerWake: "user", telemetry.TriggerEcho: "user",
		telemetry.TriggerStart: "bulk", telemetry.TriggerPeriodic: "bulk", telemetry.TriggerRequeue: "bulk", telemetry.TriggerRetry: "bulk",
	} {
		var got string
		k := New(Config{Name: "t", RateLimiter: workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			Urgent: func(cache.ObjectName) bool { return false },
			Depth: func(lane string, depth int) {
				if depth > 0 {
					got = lane
				}
			}})
		k.Wake(cache.ObjectName{Name: "a"}, telemetry.Trigger{Kind: kind})
		assert.Equal(t, want, got, "the lane of %s", kind)
		k.ShutDown()
	}
}
