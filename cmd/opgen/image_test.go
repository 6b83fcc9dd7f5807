package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestManifestsMonitoring: --monitoring writes the dashboard and the rule
// beside the manifest, and the manifest takes an image by digest.
func TestManifestsMonitoring(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "monitoring")
	image := "registry.example.com/widget-operator:v1@sha256:" + strings.Repeat("ab", 32)
	out, err := runManifests(t, "--image", image, "--monitoring", dir)
	require.NoError(t, err)
	assert.Contains(t, out, "wrote "+filepath.Join(dir, "widget-operator-dashboard.json"))
	assert.Contains(t, out, "image: "+image+"\n")
	rule, err := os.ReadFile(filepath.Join(dir, "widget-operator-prometheusrule.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(rule), "namespace: widget-operator-system")
	assert.NotContains(t, string(rule), "OpgenWebhookCertificateExpiresSoon", "this operator serves no webhooks")

	_, err = runManifests(t, "--member", "--monitoring", dir)
	assert.ErrorContains(t, err, "leave --monitoring out with --member")
}

// TestImageRefusesALabelWithoutValue: the flags are checked before any
// build starts.
func TestImageRefusesALabelWithoutValue(t *testing.T) {
	t.Parallel()
	cmd := newImageCommand()
	cmd.SetArgs([]string{"--name", "widget-operator", "--label", "revision"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	assert.ErrorContains(t, err, `--label "revision" is not key=value`)
}
