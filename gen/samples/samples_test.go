package samples_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/samples"
	"github.com/opgen-sdk/opgen/pkg/sample"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/pkg/validation"
)

// projects are the projects whose CRDs the samples are made from.
var projects = []string{
	"../../examples/hello-operator",
	"../../examples/todo-operator",
	"../internal/fixture",
}

// TestSamplesAreValid makes the sample of every kind and version of the
// projects and validates it with the API server's libraries; the committed
// samples are checked against a real server by
// pkg/validation/servertest.
func TestSamplesAreValid(t *testing.T) {
	for _, p := range projects {
		crds, err := testenv.ReadCRDs(filepath.Join(p, "config/crd"))
		require.NoError(t, err)
		set, err := validation.NewSet(crds...)
		require.NoError(t, err)
		for _, c := range crds {
			for _, v := range c.Spec.Versions {
				t.Run(samples.FileName(c, v), func(t *testing.T) {
					data, err := sample.YAML(c, v)
					require.NoError(t, err)
					u := &unstructured.Unstructured{}
					require.NoError(t, yaml.Unmarshal(data, &u.Object))
					assert.Empty(t, set.Validate(context.Background(), u))
					assert.Equal(t, v.Name, u.GroupVersionKind().Version)
				})
			}
		}
	}
}

// TestSampleHasRequiredFieldsAndDefaults checks the todo sample field by
// field: the required title, the defaulted state, nothing else.
func TestSampleHasRequiredFieldsAndDefaults(t *testing.T) {
	crds, err := testenv.ReadCRDs("../../examples/todo-operator/config/crd")
	require.NoError(t, err)
	data, err := sample.YAML(crds[0], crds[0].Spec.Versions[0])
	require.NoError(t, err)
	u := map[string]any{}
	require.NoError(t, yaml.Unmarshal(data, &u))
	assert.Equal(t, map[string]any{"title": "example", "state": "Pending"}, u["spec"])
}
