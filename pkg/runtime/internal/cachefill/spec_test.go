package cachefill

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

func TestNewSpec(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  Spec
	}{
		{nil, Spec{}},
		{[]string{"image", "replicas"}, Spec{"image": nil, "replicas": nil}},
		{[]string{"template.metadata", "template.spec.image"}, Spec{"template": Spec{"metadata": nil, "spec": Spec{"image": nil}}}},
		{[]string{"template.metadata", "template"}, Spec{"template": nil}},
		{[]string{"template", "template.metadata"}, Spec{"template": nil}},
	} {
		got, err := NewSpec(tc.paths)
		require.NoError(t, err, tc.paths)
		require.Equal(t, tc.want, got, tc.paths)
	}
	for _, bad := range []string{"", "a..b", ".a", "a."} {
		_, err := NewSpec([]string{bad})
		require.ErrorContains(t, err, "not a dotted path", bad)
	}
}

// TestSpecEdits checks what the filter leaves of a spec: the members kept,
// in their order, joined by one comma where members were dropped between
// them.
func TestSpecEdits(t *testing.T) {
	keep, err := NewSpec([]string{"b", "d.x"})
	require.NoError(t, err)
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,"b":2,"c":3}`, `{"b":2}`},
		{`{"b":2,"c":3,"d":{"x":1,"y":2}}`, `{"b":2,"d":{"x":1}}`},
		{`{"a":[1,{"b":2}],"c":"}","b":{"a":1}}`, `{"b":{"a":1}}`},
		{`{ "a" : 1 , "b" : 2 , "c" : 3 , "d" : { "y" : 1 , "x" : 2 } }`, `{"b" : 2,"d" : {"x" : 2 } }`},
		{`{"a":1,"c":2}`, `{}`},
		{`{}`, `{}`},
		{`{"b":1}`, `{"b":1}`},
		{`{"d":null,"e":1}`, `{"d":null}`},
		{`{"d":"x","e":1}`, `{"d":"x"}`},
		{`{"\u0062":1,"a":2}`, `{"\u0062":1}`}, // an escaped key is kept: more, never less
	} {
		v := []byte(`{"spec":` + tc.in + `}`)
		got := NewFilter("op").appendFiltered(nil, v, keep)
		require.Equal(t, `{"spec":`+tc.want+`}`, string(got), tc.in)
	}
	// not well-formed inside: left as it is
	v := `{"spec":{"a":1,"b" 2}}`
	require.Equal(t, v, string(NewFilter("op").appendFiltered(nil, []byte(v), keep)))
}

// TestSpecCachesTheSame checks that what a projected cache holds is the
// same whether the filter dropped the spec fields before the decode or
// the projection zeroed them after it, for lists and watches, with and
// without the managedFields filter.
func TestSpecCachesTheSame(t *testing.T) {
	for _, tc := range []struct {
		paths   []string
		project func(any)
	}{
		{[]string{}, func(obj any) { obj.(*decodeLoad).Spec = decodeLoadSpec{} }},
		{[]string{"image", "replicas", "config"}, func(obj any) {
			o := obj.(*decodeLoad)
			o.Spec = decodeLoadSpec{Image: o.Spec.Image, Replicas: o.Spec.Replicas, Config: o.Spec.Config}
		}},
		{[]string{"ports", "description"}, func(obj any) {
			o := obj.(*decodeLoad)
			o.Spec = decodeLoadSpec{Ports: o.Spec.Ports, Description: o.Spec.Description}
		}},
	} {
		keep, err := NewSpec(tc.paths)
		require.NoError(t, err)
		for _, fields := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v,fields=%v", tc.paths, fields), func(t *testing.T) {
				ctx := Fill(context.Background())
				project := func(objs []*decodeLoad) []*decodeLoad {
					for _, o := range objs {
						_, err := Trim(o, "opgen-load", false, tc.project)
						require.NoError(t, err)
					}
					return objs
				}
				client := func(body []byte) *rest.RESTClient {
					rc := decodeClient(t, body, "opgen-load", false)
					if !fields {
						rc.Client.Transport.(*filtered).filter = NewSpecFilter()
					}
					return rc
				}
				list := decodeList(t, 20, true)
				want, err := listLoads(ctx, decodeClient(t, list, "opgen-load", true))
				require.NoError(t, err)
				// outside KeepSpec, a spec filter passes the spec whole
				all, err := listLoads(ctx, client(list))
				require.NoError(t, err)
				require.Equal(t, want.Items[0].Spec, all.Items[0].Spec)
				got, err := listLoads(KeepSpec(ctx, keep), client(list))
				require.NoError(t, err)
				require.Equal(t, project(pointers(want.Items)), project(pointers(got.Items)))

				stream := decodeWatch(t, 20, true)
				wantW, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", true))
				require.NoError(t, err)
				gotW, err := watchLoads(KeepSpec(ctx, keep), client(stream))
				require.NoError(t, err)
				require.Len(t, gotW, 20)
				if len(tc.paths) == 0 {
					require.Zero(t, gotW[0].Spec, "the filter dropped the whole spec before the decode")
				}
				require.Equal(t, project(wantW), project(gotW))
			})
		}
	}
}

// TestSpecReaderChunks feeds the spec filter one byte at a time.
func TestSpecReaderChunks(t *testing.T) {
	keep, err := NewSpec([]string{"image"})
	require.NoError(t, err)
	in := `{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"env":[{"name":"x"}],"image":"i:1","note":"}{"}}}` + "\n" +
		`{"kind":"LoadList","items":[{"spec":{"image":"i:2","replicas":3}},{"spec":{}}]}`
	want := `{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"image":"i:1"}}}` + "\n" +
		`{"kind":"LoadList","items":[{"spec":{"image":"i:2"}},{"spec":{}}]}`
	r := &reader{body: io.NopCloser(iotest.OneByteReader(strings.NewReader(in))), filter: NewSpecFilter(), keep: keep}
	got, err := io.ReadAll(iotest.HalfReader(r))
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}
