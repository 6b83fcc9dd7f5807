package manifest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/manifest"
)

const digestRef = "registry.example.com/widget-operator:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestImageByDigest: a reference by digest, as opgen image prints it,
// reaches the Deployment whole in every format, and the chart's app
// version is its tag.
func TestImageByDigest(t *testing.T) {
	t.Parallel()
	opts := options()
	opts.Image = digestRef
	flat, err := manifest.Build(opts)
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, yaml.Unmarshal(objectsOf(t, flat)["Deployment widget-operator"], &d))
	assert.Equal(t, digestRef, d.Spec.Template.Spec.Containers[0].Image)

	chart, err := manifest.Helm(opts)
	require.NoError(t, err)
	assert.Contains(t, string(chart["values.yaml"]), "image: "+digestRef+"\n")
	assert.Contains(t, string(chart["Chart.yaml"]), "appVersion: v1\n")

	opts.Image = strings.Replace(digestRef, ":v1@", "@", 1)
	chart, err = manifest.Helm(opts)
	require.NoError(t, err)
	assert.Contains(t, string(chart["Chart.yaml"]), "appVersion: 0.1.0\n", "no tag: the default, not a piece of the digest")

	opts.ConfigDir = t.TempDir()
	opts.Image = "registry.example.com/widget-operator@sha256:0123"
	_, err = manifest.Build(opts)
	assert.ErrorContains(t, err, `"sha256:0123" is not a digest`)
}

func TestServesWebhooks(t *testing.T) {
	t.Parallel()
	with, err := manifest.ServesWebhooks(filepath.Join("testdata", "webhooks"))
	require.NoError(t, err)
	assert.True(t, with)
	without, err := manifest.ServesWebhooks(options().ConfigDir)
	require.NoError(t, err)
	assert.False(t, without)
}
