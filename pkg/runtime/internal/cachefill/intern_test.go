package cachefill

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInternObject checks that the transform leaves the objects' values as
// decoded and that two objects share their repeated strings and maps, in
// the metadata and in the spec.
func TestInternObject(t *testing.T) {
	ctx := Fill(context.Background())
	stream := decodeWatch(t, 3, true)
	want, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", true))
	require.NoError(t, err)
	got, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", true))
	require.NoError(t, err)
	for i := range got {
		got[i].OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"}}
		want[i].OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"}}
		_, err := trimOwn(got[i], "opgen-load")
		require.NoError(t, err)
	}
	cached(t, want, false) // the same transform, for the managedFields
	require.Equal(t, want, got, "interning changes no value")

	a, b := got[1], got[2]
	require.True(t, same(a.Namespace, b.Namespace), "namespace")
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 {
				require.True(t, same(k, k2), "label key %s", k)
			}
		}
	}
	require.True(t, same(a.Labels["tier"], b.Labels["tier"]), "label value")
	require.True(t, same(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind), "owner kind")
	require.True(t, same(a.Spec.Image, b.Spec.Image), "spec string")
	require.True(t, same(a.Spec.Env[3].Name, b.Spec.Env[3].Name), "string in a slice of structs")
	require.True(t, same(a.Spec.Command[1], b.Spec.Command[1]), "string in a slice")
	require.True(t, same(a.ManagedFields[0].Manager, b.ManagedFields[0].Manager), "managedFields head")
	require.True(t, same(a.Spec.Description, b.Spec.Description), "a long string outside the annotations")
	require.False(t, same(a.Name, b.Name))
	require.True(t, sameMap(a.Annotations, b.Annotations), "equal annotations, one map")
	require.False(t, sameMap(a.Labels, b.Labels), "labels that differ (the instance), a map each")
	require.False(t, sameMap(a.Spec.Config, b.Spec.Config), "a spec map that differs")

}

// TestInternSecondSight checks that a string or a map enters the tables
// at its second sight only, so that what one object alone holds (a value
// of its own, labels with its name) is not kept there; that the name is
// not interned; and that a slice the decoder grew keeps no spare room.
func TestInternSecondSight(t *testing.T) {
	fresh := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()) // in no table yet
	obj := func() *decodeLoad {
		env := make([]decodeEnvVar, 3, 4)
		env[0].Name, env[1].Name, env[2].Name = "A", "B", "C"
		return &decodeLoad{
			ObjectMeta: metav1.ObjectMeta{Name: fresh + "-name", Labels: map[string]string{"app": fresh + "-app"}},
			Spec:       decodeLoadSpec{Image: strings.Clone(fresh), Env: env},
		}
	}
	inTables := func() (str, labels bool) {
		tables.Lock()
		defer tables.Unlock()
		_, str = tables.strs[fresh]
		for _, m := range tables.maps {
			labels = labels || m["app"] == fresh+"-app"
		}
		return str, labels
	}

	first := obj()
	Intern(first)
	str, labels := inTables()
	require.False(t, str, "a string seen once is not kept")
	require.False(t, labels, "a map seen once is not kept")
	require.Equal(t, 3, cap(first.Spec.Env), "no spare room")
	require.Equal(t, "C", first.Spec.Env[2].Name)

	second, third := obj(), obj()
	Intern(second)
	Intern(third)
	str, labels = inTables()
	require.True(t, str)
	require.True(t, labels)
	require.True(t, same(second.Spec.Image, third.Spec.Image), "shared from the second sight on")
	require.True(t, sameMap(second.Labels, third.Labels))
	require.False(t, same(first.Spec.Image, second.Spec.Image), "the first keeps its own")
	require.False(t, same(second.Name, third.Name), "a name is not interned")
}

// TestInternLimits checks what is not shared: an annotation value over
// internMax, a string over internLongMax, and a map of another object
// equal to none.
func TestInternLimits(t *testing.T) {
	obj := func() *decodeLoad {
		return &decodeLoad{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				"long":  strings.Repeat("a", internMax+1),
				"short": strings.Repeat("b", internMax),
			}},
			Spec: decodeLoadSpec{
				Description: strings.Repeat("c", internLongMax+1),
				Image:       strings.Repeat("d", internLongMax),
				Config:      map[string]string{"k": strings.Repeat("e", 3)},
			},
		}
	}
	// The second object of a value puts it in the table, the third finds it there.
	_, a, b := obj(), obj(), obj()
	Intern(obj())
	Intern(a)
	b.Annotations["long"] = strings.Repeat("a", internMax+1) + "!" // b's annotations differ from a's
	b.Spec.Config["other"] = "x"
	Intern(b)
	require.False(t, same(a.Annotations["long"], b.Annotations["long"][:internMax+1]), "an annotation value over internMax")
	require.True(t, same(a.Annotations["short"], b.Annotations["short"]), "an annotation value of internMax")
	require.False(t, same(a.Spec.Description, b.Spec.Description), "a string over internLongMax")
	require.True(t, same(a.Spec.Image, b.Spec.Image), "a string of internLongMax")
	require.True(t, same(a.Spec.Config["k"], b.Spec.Config["k"]), "the values of a map shared with none")
	require.Equal(t, map[string]string{"k": "eee", "other": "x"}, b.Spec.Config)
}

// TestTrimOwnedSharedAnnotations checks that TrimOwned, which moves the
// hash annotation out of the annotations, does so before they are shared:
// owned objects declared alike carry equal annotations, and trimming one
// must not change the next.
func TestTrimOwnedSharedAnnotations(t *testing.T) {
	const manager, hashAnnotation = "opgen-load", "opgen.dev/applied-hash"
	own := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns",
			Annotations: map[string]string{hashAnnotation: "h1", "team": "blue"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`),
			}},
		}}
	}
	var objs []*corev1.ConfigMap
	for i := range 3 {
		o := own(fmt.Sprint("cm-", i))
		_, err := TrimOwned(o, manager, hashAnnotation)
		require.NoError(t, err)
		objs = append(objs, o)
	}
	for _, o := range objs {
		fields, hash, ok := OwnApply(o, manager, hashAnnotation)
		require.True(t, ok)
		require.Equal(t, "h1", hash, "%s: the hash annotation, kept in the entry", o.Name)
		require.Equal(t, FieldsHash([]byte(`{"f:data":{}}`)), fields)
		require.Equal(t, map[string]string{"team": "blue"}, o.Annotations)
	}
	require.True(t, sameMap(objs[1].Annotations, objs[2].Annotations), "the rest of the annotations, shared from the second sight on")
}

// BenchmarkTrim reports the cache transform's cost per Load-shaped
// object as decoded from a watch (ns/op is per object).
//
//	go test ./pkg/runtime/internal/cachefill -run '^$' -bench BenchmarkTrim -benchmem
func BenchmarkTrim(b *testing.B) {
	const n = 1000
	stream := decodeWatch(b, n, true)
	ctx := Fill(context.Background())
	rc := decodeClient(b, stream, "opgen-load", true)
	for b.Loop() {
		b.StopTimer()
		objs, err := watchLoads(ctx, rc)
		if err != nil || len(objs) != n {
			b.Fatal(err, len(objs))
		}
		b.StartTimer()
		for _, o := range objs {
			_, _ = trimOwn(o, "opgen-load")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
}

// same reports whether a and b are one string in memory (not only equal).
func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// resetTables empties the intern tables.
func resetTables() {
	tables.Lock()
	tables.strs, tables.strBytes, tables.maps, tables.once = nil, 0, nil, nil
	tables.Unlock()
}

// sameMap reports whether a and b are the same map (not only equal).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestInternPacksOwnAndSharesSlices checks that the strings an object
// alone holds (name, UID, its env and config values, the label with its
// name) end up side by side in one allocation, and that from the third object on a
// slice equal to another object's (command, ports, conditions) is that
// object's, while a slice with a value of its own (env) is not shared.
func TestInternPacksOwnAndSharesSlices(t *testing.T) {
	resetTables()
	t.Cleanup(resetTables)
	ctx := Fill(context.Background())
	stream := decodeWatch(t, 4, false)
	want, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", false))
	require.NoError(t, err)
	got, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", false))
	require.NoError(t, err)
	for _, o := range got {
		_, err := trimOwn(o, "opgen-load")
		require.NoError(t, err)
	}
	cached(t, want, false)
	require.Equal(t, want, got, "packing and sharing change no value")

	for _, o := range got[1:] { // the first holds every string as its own
		owned := []string{o.Name, string(o.UID), o.ResourceVersion, o.Labels["app.kubernetes.io/instance"]}
		for _, e := range o.Spec.Env {
			owned = append(owned, e.Value)
		}
		for _, v := range o.Spec.Config {
			owned = append(owned, v)
		}
		lo, hi, n := uintptr(0), uintptr(0), 0
		for _, s := range owned {
			p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
			if lo == 0 || p < lo {
				lo = p
			}
			hi, n = max(hi, p+uintptr(len(s))), n+len(s)
		}
		require.Equal(t, uintptr(n), hi-lo, "%s: its own %d strings lie side by side, in one allocation", o.Name, len(owned))
	}

	c, d := got[2], got[3]
	require.True(t, sameSlice(c.Spec.Command, d.Spec.Command), "command")
	require.True(t, sameSlice(c.Spec.Ports, d.Spec.Ports), "ports")
	require.True(t, sameSlice(c.Status.Conditions, d.Status.Conditions), "conditions")
	require.False(t, sameSlice(c.Spec.Env, d.Spec.Env), "env, with values of their own")
	require.False(t, sameSlice(got[1].Spec.Command, c.Spec.Command), "the second sight goes into the table, the third finds it")
}

// sameSlice reports whether a and b are the same slice in memory.
func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
