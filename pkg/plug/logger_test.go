package plug_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// TestLoggerLogsEachApply: at V(1) the Logger step logs every apply made
// inside it, with kind, name, result and duration: the descendant applied
// then unchanged, the status, the event; at V(0) it logs none of them.
func TestLoggerLogsEachApply(t *testing.T) {
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
	env := testEnv(&fakeClient{}, s, &fakeRecorder{})
	handler := func(a *plug.Action[*widget]) error {
		a.Own(corev1ac.ConfigMap("cm", "").WithData(map[string]string{"k": "v"}))
		a.Object.Status.Phase = "Ready"
		a.AddEvent(plug.Event{Type: corev1.EventTypeNormal, Reason: "Configured", Note: "made cm"})
		return nil
	}
	steps := func() []plug.Step[*widget] {
		return []plug.Step[*widget]{plug.Logger[*widget](), plug.RecordEvents[*widget](env.Recorder), plug.ApplyStatus(env), plug.ApplyOwned(env)}
	}
	var buf bytes.Buffer
	log := funcr.New(func(_, args string) { buf.WriteString(args + "\n") }, funcr.Options{Verbosity: 1})
	require.NoError(t, run(plug.NewAction(plug.Add, newWidget(1, 0), log), handler, steps()...))
	applied := appliedLines(buf.String())
	require.Len(t, applied, 3, buf.String())
	assert.Contains(t, applied[0], `"kind"="ConfigMap" "object"="ns/cm" "result"="applied" "duration"=`)
	assert.Contains(t, applied[1], `"kind"="Widget/status" "object"="ns/w" "result"="applied"`)
	assert.Contains(t, applied[2], `"kind"="Event" "object"="Configured" "result"="emitted"`)

	buf.Reset()
	require.NoError(t, run(plug.NewAction(plug.Modify, newWidget(1, 0), log), handler, steps()...))
	assert.Contains(t, appliedLines(buf.String())[0], `"object"="ns/cm" "result"="unchanged"`, "the second apply of the same body is skipped, and said so")

	buf.Reset()
	quiet := funcr.New(func(_, args string) { buf.WriteString(args + "\n") }, funcr.Options{Verbosity: 0})
	require.NoError(t, run(plug.NewAction(plug.Add, newWidget(1, 0), quiet), handler, steps()...))
	assert.Empty(t, appliedLines(buf.String()), "applies are logged at V(1) only")
}

func appliedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, `"msg"="applied"`) {
			out = append(out, l)
		}
	}
	return out
}
