package manifest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// The chart's rendering is proven against Helm's own library in
// hack/helmcheck; these check what needs no Helm.

func TestHelmIsDeterministicAndPrunes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "chart")
	first, err := manifest.WriteHelm(options(), dir)
	require.NoError(t, err)
	stale := filepath.Join(dir, "templates", "old_kind.yaml")
	require.NoError(t, os.WriteFile(stale, []byte(manifest.HelmHeader), 0o644))
	mine := filepath.Join(dir, "templates", "extra.yaml")
	require.NoError(t, os.WriteFile(mine, []byte("# the user's\n"), 0o644))

	again, err := manifest.WriteHelm(options(), dir)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.NoFileExists(t, stale, "a template opgen wrote and no longer writes goes")
	assert.FileExists(t, mine, "a template opgen did not write stays")

	a, err := manifest.Helm(options())
	require.NoError(t, err)
	b, err := manifest.Helm(options())
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Contains(t, string(a["values.yaml"]), "image: example.com/widget-operator:v1")
	assert.Contains(t, string(a["Chart.yaml"]), "appVersion: v1")
}

func TestHelmKeepsTheObjectsBraces(t *testing.T) {
	t.Parallel()
	opts := options()
	opts.Labels = map[string]string{"note": "{{x}}"}
	files, err := manifest.Helm(opts)
	require.NoError(t, err)
	assert.Contains(t, string(files["templates/service_account.yaml"]), `note: '{{ "{{" }}x}}'`)
}
