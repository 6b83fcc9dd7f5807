package runtime_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestRecorderCutsLongNotes: a handler that records an Event through
// Operator.Recorder itself, with a note of 3,000 bytes (multi-byte runes
// included), gets it stored, cut to the server's 1 KiB on a rune boundary.
// Before, the server rejected it (422) and the Event was lost.
func TestRecorderCutsLongNotes(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	long := strings.Repeat("é", 1000) + strings.Repeat("x", 1000) // 3,000 bytes
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Verb == plug.Add {
			h.op.Recorder().Eventf(a.Object, nil, corev1.EventTypeWarning, "Long", "Check", "%s: %s", "long", long)
		}
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	var note string
	eventually(t, "the Event with the long note", func() bool {
		evs, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Reason == "Long" {
				note = e.Note
				return true
			}
		}
		return false
	})
	require.LessOrEqual(t, len(note), 1024)
	require.True(t, utf8.ValidString(note), "cut inside a rune")
	require.True(t, strings.HasPrefix(note, "long: éé"), note)
	require.True(t, strings.HasSuffix(note, "..."), note)
}
