package generators_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/generators"
)

func TestPick(t *testing.T) {
	t.Parallel()
	all, err := generators.Pick(nil)
	require.NoError(t, err)
	assert.Len(t, all, len(generators.Names()))

	some, err := generators.Pick([]string{"crd", "rbac"})
	require.NoError(t, err)
	assert.Len(t, some, 2)
	assert.Contains(t, some, "crd")

	former, err := generators.Pick([]string{"stubs"})
	require.NoError(t, err, "a generator's former name")
	assert.Contains(t, former, "scaffold")

	_, err = generators.Pick([]string{"crd", "crds"})
	require.EqualError(t, err, "--only crds: no such generator; pick from accessors, apidocs, client, compat, controller, conversion, crd, deepcopy, defaults, rbac, register, samples, scaffold, webhooks")
}

// TestAllIsNewEachCall: a generator's per-run state is not shared
// between runs.
func TestAllIsNewEachCall(t *testing.T) {
	t.Parallel()
	assert.NotSame(t, generators.All()["client"], generators.All()["client"])
}
