package preflight_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/opgen-sdk/opgen/gen/compat/preflight"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// TestMeasurePreflight measures a preflight of PREFLIGHT_OBJECTS Widgets
// (default 1,000), a tenth of them refused. It runs on demand:
//
//	OPGEN_MEASURE=1 go test ./gen/compat/preflight -run TestMeasurePreflight -v
func TestMeasurePreflight(t *testing.T) {
	if os.Getenv("OPGEN_MEASURE") == "" {
		t.Skip("a measurement: set OPGEN_MEASURE=1 to run it")
	}
	n := 1000
	if s := os.Getenv("PREFLIGHT_OBJECTS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	ctx := context.Background()
	scratch := testenv.New(testenv.Options{Private: true})
	require.NoError(t, scratch.Start(ctx))
	t.Cleanup(scratch.Stop)
	released, release := readCRD(t, "testdata/released.yaml"), readCRD(t, "testdata/release.yaml")
	require.NoError(t, env.ApplyCRDs(ctx, released))
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	res := dyn.Resource(widgets).Namespace(env.Namespace(t))
	t.Cleanup(func() { cleanUp(t, res, released) })
	for i := range n {
		name := fmt.Sprintf("w%d", i)
		if i%10 == 0 {
			name = fmt.Sprintf("long-widget-%d", i)
		}
		w := widget(name, "red")
		w.SetFinalizers(nil)
		_, err := res.Create(ctx, w, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	start := time.Now()
	report, err := preflight.Check(ctx, preflight.Options{Cluster: env.Config, Scratch: scratch.Config, CRDs: []*apiextensionsv1.CustomResourceDefinition{release}})
	require.NoError(t, err)
	took := time.Since(start)
	require.Len(t, report.Versions[0].Refused, (n+9)/10)
	t.Logf("preflight of %d objects: %s, %.0f objects/s", n, took.Round(time.Millisecond), float64(n)/took.Seconds())
}
