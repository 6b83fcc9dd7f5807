package watchjson

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"
)

func TestPeekEvent(t *testing.T) {
	t.Parallel()
	ok := func(frame, typ, ns, name, rv string) {
		t.Helper()
		p, found := peekEvent([]byte(frame))
		require.True(t, found, frame)
		assert.Equal(t, watch.EventType(typ), p.typ, frame)
		assert.Equal(t, ns, string(p.namespace), frame)
		assert.Equal(t, name, string(p.name), frame)
		assert.Equal(t, rv, string(p.rv), frame)
	}
	ok(`{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"12"},"data":{"k":"v"}}}`,
		"MODIFIED", "ns", "a", "12")
	// The same keys elsewhere, before and inside metadata, and strings
	// that hold braces, quotes and escapes.
	ok(` { "object" : { "spec" : { "resourceVersion" : "1", "name" : "x", "l" : [ 1, { "a" : "}\"{" }, null, true, -2.5e3 ] } , `+
		`"metadata" : { "annotations" : { "resourceVersion" : "2", "name" : "y\\\"z" }, "labels" : { "namespace" : "n" }, `+
		`"managedFields" : [ { "fieldsV1" : { "f:metadata" : { "f:resourceVersion" : { } } } } ], `+
		`"name" : "a", "namespace" : "ns", "resourceVersion" : "12" } } , "type" : "ADDED" } `,
		"ADDED", "ns", "a", "12")
	ok(`{"type":"DELETED","object":{"metadata":{"name":"node-1","resourceVersion":"3"}}}`, "DELETED", "", "node-1", "3")

	for _, frame := range []string{
		``,
		`{}`,
		`{"type":"BOOKMARK","object":{"metadata":{"name":"a","resourceVersion":"12"}}}`,
		`{"type":"ERROR","object":{"metadata":{"name":"a","resourceVersion":"12"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"namespace":"ns","resourceVersion":"12"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a\u0062","namespace":"ns","resourceVersion":"12"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","name":"b","resourceVersion":"12"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"12"},"metadata":{"name":"b"}}}`,
		`{"type":"MODIFIED","type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"12"}}}`,
		`{"object":{"metadata":{"name":"a","resourceVersion":"12"}},"object":{},"type":"MODIFIED"}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"12"`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a" "resourceVersion":"12"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":7,"resourceVersion":"12"}}}`,
	} {
		_, found := peekEvent([]byte(frame))
		assert.False(t, found, frame)
	}
}

// TestPeekEventAsDecoded: wherever peekEvent reads an event, it reads
// what decoding it gives.
func TestPeekEventAsDecoded(t *testing.T) {
	t.Parallel()
	data := stream(t, "\n")
	f := frames{r: bytes.NewReader(data), buf: make([]byte, 0, 64)}
	seen := 0
	for {
		frame, err := f.next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		var ev struct {
			Type   watch.EventType `json:"type"`
			Object struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"object"`
		}
		require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts(frame, &ev))
		p, found := peekEvent(frame)
		short := string(frame[:min(len(frame), 160)])
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			require.True(t, found, short)
			seen++
			assert.Equal(t, ev.Type, p.typ)
			assert.Equal(t, ev.Object.Metadata.Namespace, string(p.namespace))
			assert.Equal(t, ev.Object.Metadata.Name, string(p.name))
			assert.Equal(t, ev.Object.Metadata.ResourceVersion, string(p.rv))
		default:
			assert.False(t, found, short)
		}
	}
	assert.Equal(t, 3, seen)
}

// ownWritesServer answers a PATCH of ns/a with the ConfigMap at version
// rv, and a watch with the events given, the ConfigMap at the versions
// given, as the API server writes them.
func ownWritesServer(t *testing.T, rv string, events ...string) rest.Interface {
	t.Helper()
	cm := func(rv string) []byte {
		b, err := json.Marshal(&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: rv, Labels: map[string]string{"x": "y"}},
			Data:       map[string]string{"k": "v"},
		})
		require.NoError(t, err)
		return b
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch {
			_, _ = w.Write(cm(rv))
			return
		}
		for _, v := range events {
			_, _ = w.Write([]byte(`{"type":"MODIFIED","object":` + string(cm(v)) + "}\n"))
		}
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return cs.CoreV1().RESTClient()
}

func watchAll(t *testing.T, c rest.Interface) []*corev1.ConfigMap {
	t.Helper()
	w, err := Watch[*corev1.ConfigMap](context.Background(), c, "configmaps", "ns", metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	var out []*corev1.ConfigMap
	for ev := range w.ResultChan() {
		out = append(out, ev.Object.(*corev1.ConfigMap))
	}
	return out
}

// TestWatchTakesOwnWrites: the event of a write that returned the object
// at its version is that object, a copy the writer does not hold; the
// others are decoded.
func TestWatchTakesOwnWrites(t *testing.T) {
	c := ownWritesServer(t, "12", "11", "12", "12")
	ctx := context.Background()
	wrote, err := NewClient[*corev1.ConfigMap](c, "configmaps", "ns").Patch(ctx, "a", types.ApplyPatchType, []byte(`{}`), metav1.PatchOptions{FieldManager: "m"})
	require.NoError(t, err)

	got := watchAll(t, c)
	require.Len(t, got, 3)
	for _, o := range got {
		assert.Equal(t, "a", o.Name)
		assert.Empty(t, o.APIVersion, "TypeMeta cleared, as decoding clears it")
	}
	assert.Equal(t, wrote, got[1], "the event of the write is what the write returned")
	assert.NotSame(t, wrote, got[1], "a copy")
	assert.Equal(t, got[1], got[2], "the same event again is decoded to the same")
	assert.NotSame(t, got[1], got[2])

	written.mu.Lock()
	_, kept := written.m[writtenKey{c, "configmaps"}]
	written.mu.Unlock()
	assert.False(t, kept, "the entry went with its event")
}

// TestWrittenDropsOlderEntries: a later event of the object drops the
// entry of an earlier write, as does time.
func TestWrittenDropsOlderEntries(t *testing.T) {
	c := ownWritesServer(t, "12", "13")
	_, err := NewClient[*corev1.ConfigMap](c, "configmaps", "ns").Patch(context.Background(), "a", types.ApplyPatchType, []byte(`{}`), metav1.PatchOptions{})
	require.NoError(t, err)
	kept := func() bool {
		written.mu.Lock()
		defer written.mu.Unlock()
		_, ok := written.m[writtenKey{c, "configmaps"}]["ns/a"]
		return ok
	}
	require.True(t, kept())
	assert.Len(t, watchAll(t, c), 1)
	assert.False(t, kept(), "version 13 is after 12")

	_, err = NewClient[*corev1.ConfigMap](c, "configmaps", "ns").Patch(context.Background(), "a", types.ApplyPatchType, []byte(`{}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.True(t, kept())
	written.mu.Lock()
	written.expire(time.Now().Add(writtenFor + time.Second))
	written.mu.Unlock()
	assert.False(t, kept(), "expired")
}

// BenchmarkOwnWriteEvent is the cost of the watch event of an own write,
// 4 KB with managedFields: decoding it, against a copy of what the write
// returned taken at the write (remember) and handed over at the event
// (peekEvent, take).
func BenchmarkOwnWriteEvent(b *testing.B) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"app": "bench", "tier": "backend"}},
		Data:       map[string]string{},
	}
	for i := range 40 {
		cm.Data[fmt.Sprintf("key-%02d", i)] = strings.Repeat("v", 40)
	}
	for _, m := range []string{"someone", "opgen"} {
		cm.ManagedFields = append(cm.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:key-00":{},"f:key-01":{},"f:key-02":{},"f:key-03":{}}}`)})
	}
	obj, err := json.Marshal(cm)
	require.NoError(b, err)
	frame := []byte(`{"type":"MODIFIED","object":` + string(obj) + `}`)
	returned, err := decodeObject[*corev1.ConfigMap](obj)
	require.NoError(b, err)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	require.NoError(b, err)
	c := cs.CoreV1().RESTClient()
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ev event[*corev1.ConfigMap]
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(frame, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy and take", func(b *testing.B) {
		b.ReportAllocs()
		var key []byte
		for b.Loop() {
			written.remember(c, "configmaps", returned)
			var ok bool
			if _, _, key, ok = written.take(c, "configmaps", frame, key); !ok {
				b.Fatal("not taken")
			}
		}
	})
}
