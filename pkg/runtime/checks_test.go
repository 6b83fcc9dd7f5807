package runtime_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestUserChecksAndPprof: a failing user ready check makes /readyz answer
// 503 naming it, and /readyz recovers when it passes; a failing health
// check makes /healthz answer 500; a degraded ready check is shown on
// /readyz without failing it; pprof answers on its own listener when
// asked for, and is off by default.
func TestUserChecksAndPprof(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{HealthAddr: "127.0.0.1:0", PprofAddr: "127.0.0.1:0"})
	var failReady, failHealth atomic.Bool
	failReady.Store(true)
	require.NoError(t, h.op.AddReadyCheck("database", func(*http.Request) error {
		if failReady.Load() {
			return errors.New("no connection to the database")
		}
		return nil
	}))
	var degraded atomic.Bool
	require.NoError(t, h.op.AddReadyCheck("region", func(*http.Request) error {
		if degraded.Load() {
			return runtime.Degraded(errors.New("one of three regions is unreachable"))
		}
		return nil
	}))
	require.NoError(t, h.op.AddHealthCheck("loop", func(*http.Request) error {
		if failHealth.Load() {
			return errors.New("the loop is wedged")
		}
		return nil
	}))
	require.ErrorContains(t, h.op.AddReadyCheck("database", func(*http.Request) error { return nil }), `a check named "database" exists`)
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()

	code, body := get(t, "http://"+h.op.HealthAddr()+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, `check "database" failed: no connection to the database`)
	failReady.Store(false)
	code, body = get(t, "http://"+h.op.HealthAddr()+"/readyz")
	assert.Equal(t, http.StatusOK, code, body)
	degraded.Store(true)
	code, body = get(t, "http://"+h.op.HealthAddr()+"/readyz")
	assert.Equal(t, http.StatusOK, code, "a degraded check does not fail /readyz")
	assert.Contains(t, body, `check "region" degraded: one of three regions is unreachable`)
	assert.NoError(t, h.op.CheckReady(context.Background()))

	code, _ = get(t, "http://"+h.op.HealthAddr()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	failHealth.Store(true)
	code, body = get(t, "http://"+h.op.HealthAddr()+"/healthz")
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, `check "loop" failed: the loop is wedged`)

	require.NotEmpty(t, h.op.PprofAddr())
	assert.NotEqual(t, h.op.HealthAddr(), h.op.PprofAddr(), "pprof has its own listener")
	code, body = get(t, "http://"+h.op.PprofAddr()+"/debug/pprof/goroutine?debug=1")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "goroutine profile:")
	code, _ = get(t, "http://"+h.op.HealthAddr()+"/debug/pprof/")
	assert.Equal(t, http.StatusNotFound, code, "pprof is not on the health listener")

	off := newOperator(t, ns, nil, runtime.Options{LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	off.start()
	assert.Empty(t, off.op.PprofAddr(), "pprof is off by default")
}

// syncBuffer is a bytes.Buffer safe for the operator's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestJSONLogs: with LogFormat json every line is a JSON object, and every
// line of an action (the Logger step's "handling" and "handled" at -v=1)
// carries the controller, namespace, name, verb and reconcile ID.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	out := &syncBuffer{}
	cfg := rest.CopyConfig(env.Config)
	op, err := runtime.New(cfg, runtime.Options{
		Name: "json-operator", Namespaces: []string{ns},
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0", HealthAddr: "0",
		LogFormat: "json", Verbosity: 1, LogOutput: out,
	})
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	h := &harness{t: t, ns: ns, op: op, writes: &writes{}, kind: kind}
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "logged", testapi.GadgetSpec{})
	eventually(t, `the Logger step's "handled" line`, func() bool { return strings.Contains(out.String(), `"msg":"handled"`) })

	var actions int
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "a log line that is not JSON: %s", sc.Text())
		if line["msg"] != "handling" && line["msg"] != "handled" {
			continue
		}
		actions++
		assert.Equal(t, "gadget", line["controller"], sc.Text())
		assert.Equal(t, ns, line["namespace"], sc.Text())
		assert.Equal(t, "logged", line["name"], sc.Text())
		assert.Equal(t, "Add", line["verb"], sc.Text())
		assert.NotEmpty(t, line["reconcileID"], sc.Text())
	}
	require.NoError(t, sc.Err())
	assert.GreaterOrEqual(t, actions, 2, out.String())
}
