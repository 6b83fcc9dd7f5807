package watchjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

type decoded struct {
	typ watch.EventType
	obj runtime.Object
}

// stream is the JSON of a watch of ConfigMaps as the API server writes
// it, with strings that hold braces, quotes and escapes, an object larger
// than the decoder's first buffer, a bookmark and an ERROR event.
func stream(t *testing.T, sep string) []byte {
	t.Helper()
	big := strings.Repeat("0123456789abcdef", 3000) // 48 KB
	cm := func(name, value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
			Data:       map[string]string{"v": value},
		}
	}
	events := []metav1.WatchEvent{
		{Type: "ADDED", Object: runtime.RawExtension{Object: cm("one", `{"not": "an object"} }}} \" \\ ]`)}},
		{Type: "MODIFIED", Object: runtime.RawExtension{Object: cm("two", big)}},
		{Type: "DELETED", Object: runtime.RawExtension{Object: cm("three", "é ☃ \u2028")}},
		{Type: "BOOKMARK", Object: runtime.RawExtension{Object: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
		}}},
		{Type: "ERROR", Object: runtime.RawExtension{Object: &metav1.Status{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
			Status:   metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (5)",
		}}},
	}
	var b bytes.Buffer
	for _, ev := range events {
		raw, err := json.Marshal(ev.Object.Object)
		require.NoError(t, err)
		ev.Object = runtime.RawExtension{Raw: raw}
		line, err := json.Marshal(ev)
		require.NoError(t, err)
		b.Write(line)
		b.WriteString(sep)
	}
	return b.Bytes()
}

func decodeAll(t *testing.T, d watch.Decoder) ([]decoded, error) {
	t.Helper()
	var out []decoded
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			return out, err
		}
		out = append(out, decoded{typ, obj})
	}
}

// clientGo decodes the stream as client-go's typed clients do.
func clientGo(t *testing.T, data []byte) []decoded {
	t.Helper()
	codecs := scheme.Codecs.WithoutConversion()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), "application/json")
	require.True(t, ok)
	ss := info.StreamSerializer
	d := restclientwatch.NewDecoder(streaming.NewDecoder(ss.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(data))), ss.Serializer),
		codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion))
	out, err := decodeAll(t, d)
	require.ErrorIs(t, err, io.EOF)
	return out
}

func TestDecoderDecodesAsClientGo(t *testing.T) {
	t.Parallel()
	for name, sep := range map[string]string{"newlines": "\n", "nothing between": "", "spaces": " \r\n\t "} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := stream(t, sep)
			want := clientGo(t, data)
			require.Len(t, want, 5)
			for reader, r := range map[string]io.Reader{"whole": bytes.NewReader(data), "byte by byte": iotest.OneByteReader(bytes.NewReader(data))} {
				got, err := decodeAll(t, NewDecoder[*corev1.ConfigMap](io.NopCloser(r)))
				require.ErrorIs(t, err, io.EOF, reader)
				require.Len(t, got, len(want), reader)
				for i := range want {
					assert.Equal(t, want[i].typ, got[i].typ, reader)
					if want[i].typ == watch.Error {
						// client-go leaves the Status' TypeMeta.
						assert.Equal(t, want[i].obj.(*metav1.Status).Message, got[i].obj.(*metav1.Status).Message, reader)
						assert.Equal(t, int32(410), got[i].obj.(*metav1.Status).Code, reader)
						continue
					}
					assert.Equal(t, want[i].obj, got[i].obj, reader)
				}
			}
		})
	}
}

func TestDecoderBadStreams(t *testing.T) {
	t.Parallel()
	decode := func(s string) error {
		_, err := decodeAll(t, NewDecoder[*corev1.ConfigMap](io.NopCloser(strings.NewReader(s))))
		return err
	}
	assert.ErrorIs(t, decode(""), io.EOF)
	assert.ErrorIs(t, decode(" \n"), io.EOF)
	assert.ErrorIs(t, decode(`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`+"\n"+`{"type":"ADDED","obj`), io.ErrUnexpectedEOF)
	assert.ErrorContains(t, decode(`{"type":"SOMETHING","object":{}}`), "invalid watch event type")
	assert.ErrorContains(t, decode(`{"type":"ADDED"}`), "has no object")
	assert.ErrorContains(t, decode(`{"type":"ADDED","object":{}}}`), "unbalanced")
	assert.ErrorContains(t, decode(`x{"type":"ADDED","object":{}}`), "outside of an event")
	assert.ErrorContains(t, decode(`{"type":"ADDED","object":{"data":7}}`), "decode a watch event")
}

// TestDecoderErrorOfAKindWithAStatus: an ERROR event decodes as its
// Status for a kind whose status is a struct, which the Status' "status"
// string does not fit (the 410 Gone that ends a watch after compaction).
func TestDecoderErrorOfAKindWithAStatus(t *testing.T) {
	t.Parallel()
	gone := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}` + "\n"
	typ, obj, err := NewDecoder[*corev1.Pod](io.NopCloser(strings.NewReader(gone))).Decode()
	require.NoError(t, err)
	assert.Equal(t, watch.Error, typ)
	assert.Equal(t, int32(410), obj.(*metav1.Status).Code)
	assert.Equal(t, metav1.StatusReasonExpired, obj.(*metav1.Status).Reason)
}

// waiting returns each line of its stream in reads of its own, and calls
// next before the first read of every line but the first.
type waiting struct {
	lines [][]byte
	next  func()
}

func (w *waiting) Read(p []byte) (int, error) {
	for len(w.lines) > 0 && len(w.lines[0]) == 0 {
		w.lines = w.lines[1:]
		if len(w.lines) > 0 {
			w.next()
		}
	}
	if len(w.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, w.lines[0])
	w.lines[0] = w.lines[0][n:]
	return n, nil
}

// TestDecoderHoldsNothingWhileWaiting: once an event was decoded and no
// byte of the next came, the decoder holds no buffer.
func TestDecoderHoldsNothingWhileWaiting(t *testing.T) {
	lines := bytes.SplitAfter(stream(t, "\n"), []byte("\n"))
	var d *Decoder[*corev1.ConfigMap]
	waits := 0
	d = NewDecoder[*corev1.ConfigMap](io.NopCloser(&waiting{lines: lines, next: func() {
		waits++
		assert.Nil(t, d.frames.buf, "no buffer is held while the watch waits")
	}}))
	got, err := decodeAll(t, d)
	require.ErrorIs(t, err, io.EOF)
	want := clientGo(t, stream(t, "\n"))
	require.Len(t, got, len(want))
	assert.Equal(t, want[:3], got[:3], "the objects decode as before")
	assert.Equal(t, len(lines)-1, waits)
}

// BenchmarkDecodeStream decodes a watch-list stream of 1,000 ConfigMaps
// of about 3 KB each (labels, annotations, two managedFields entries):
// the framing and the decode of each event.
//
//	go test ./pkg/runtime/internal/watchjson -run '^$' -bench BenchmarkDecodeStream -benchmem
func BenchmarkDecodeStream(b *testing.B) {
	var buf bytes.Buffer
	fields := `{"f:data":{` + strings.Repeat(`"f:key-\"quoted\"-0123456789":{},`, 40) + `"f:last":{}}}`
	for i := range 1000 {
		cm := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("cm-%05d", i), Namespace: "bench", ResourceVersion: fmt.Sprint(1000 + i),
				Labels:      map[string]string{"app": "bench", "tier": "backend"},
				Annotations: map[string]string{"note": `a "quoted" \ note`},
				ManagedFields: []metav1.ManagedFieldsEntry{
					{Manager: "one", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)},
					{Manager: "two", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)},
				},
			},
			Data: map[string]string{"k": strings.Repeat("value ", 50)},
		}
		raw, err := json.Marshal(cm)
		require.NoError(b, err)
		line, err := json.Marshal(metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: raw}})
		require.NoError(b, err)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder[*corev1.ConfigMap](io.NopCloser(bytes.NewReader(stream)))
		n := 0
		for {
			_, _, err := d.Decode()
			if err == io.EOF {
				break
			}
			require.NoError(b, err)
			n++
		}
		require.Equal(b, 1000, n)
	}
}
