package optest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hellov1 "github.com/opgen-sdk/opgen/examples/hello-operator/apis/hello/v1"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// TestSampleFillsRequiredFields builds a Greeting from the hello example's
// CRD: its required greeting is filled with a value the server accepts.
func TestSampleFillsRequiredFields(t *testing.T) {
	hello := optest.New(optest.Options{ConfigDir: "../../examples/hello-operator/config"})
	gvk := schema.GroupVersionKind{Group: "hello.example.com", Version: "v1", Kind: "Greeting"}
	g := &hellov1.Greeting{}
	hello.Sample(t, gvk, g)
	assert.NotEmpty(t, g.Spec.Greeting, "the required greeting")
	assert.Equal(t, "greeting-sample", g.Name)

	msg := failure(t, func(tb testing.TB) {
		hello.Sample(tb, schema.GroupVersionKind{Group: "hello.example.com", Version: "v9", Kind: "Greeting"}, g)
	})
	assert.Contains(t, msg, "no CRD in ../../examples/hello-operator/config/crd has hello.example.com/v9, Kind=Greeting")
	assert.Contains(t, msg, "run go generate ./...")
}
