// Package conversiontest proves that the conversions between two versions
// of a kind lose nothing: the round-trip tests opgen generates in each
// spoke package (zz_generated.conversion_test.go) call RoundTrip.
//
// RoundTrip fills objects with random values (sigs.k8s.io/randfill, with
// apimachinery's fuzzer functions for metav1 types, so that object
// metadata is valid), converts each spoke → hub → spoke and hub → spoke →
// hub with the scheme's conversion functions, and compares the result
// with the original by apimachinery's semantic equality. Fields a
// conversion drops on purpose (+opgen:conversion:drop) are kept zero by
// the fill functions the generated test passes (see Zero).
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package conversiontest

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Rounds is how many random objects each direction converts.
const Rounds = 200

// RoundTrip checks that spoke → hub → spoke and hub → spoke → hub give back
// the original object, for Rounds random objects each. addToScheme adds the
// conversions (a spoke package's AddToScheme); fill are extra randfill
// functions, such as those that keep dropped fields zero.
func RoundTrip[S, H runtime.Object](t *testing.T, addToScheme func(*runtime.Scheme) error, fill ...any) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := addToScheme(scheme); err != nil {
		t.Fatalf("build the scheme: %v", err)
	}
	seed := rand.Int63()
	f := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(seed), serializer.NewCodecFactory(scheme))
	f.Funcs(fill...)
	t.Run(name[S]()+"→"+name[H]()+"→"+name[S](), func(t *testing.T) {
		roundTrip[S, H](t, scheme, f.Fill, seed)
	})
	t.Run(name[H]()+"→"+name[S]()+"→"+name[H](), func(t *testing.T) {
		roundTrip[H, S](t, scheme, f.Fill, seed)
	})
}

func roundTrip[A, B runtime.Object](t *testing.T, scheme *runtime.Scheme, fill func(any), seed int64) {
	t.Helper()
	for i := range Rounds {
		in := newObject[A]()
		fill(in)
		// The webhook sets apiVersion and kind; conversions leave them.
		in.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		mid, out := newObject[B](), newObject[A]()
		if err := scheme.Convert(in, mid, nil); err != nil {
			t.Fatalf("round %d (seed %d): convert %T to %T: %v", i, seed, in, mid, err)
		}
		if err := scheme.Convert(mid, out, nil); err != nil {
			t.Fatalf("round %d (seed %d): convert %T back to %T: %v", i, seed, mid, out, err)
		}
		if !equality.Semantic.DeepEqual(in, out) {
			t.Fatalf("round %d (seed %d): %T lost data through %T (-before +after):\n%s", i, seed, in, mid, cmp.Diff(in, out))
		}
	}
}

// newObject returns a new zero object of the pointer type T.
func newObject[T runtime.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}

func name[T runtime.Object]() string {
	var zero T
	t := reflect.TypeOf(zero).Elem()
	return fmt.Sprintf("%s.%s", lastElem(t.PkgPath()), t.Name())
}

func lastElem(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// Zero sets *p to its zero value: the fill function of a type with a
// dropped field zeroes it after filling the rest.
func Zero[T any](p *T) {
	var zero T
	*p = zero
}
