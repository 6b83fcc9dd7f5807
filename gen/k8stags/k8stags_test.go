package k8stags_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/crd"
	"github.com/opgen-sdk/opgen/gen/k8stags"
)

var update = flag.Bool("update", false, "write the tags fixture's CRD to testdata/tags/config/crd")

// TestTagsGiveTheMarkersCRD: the fixture API written with +k8s: tags
// (testdata/tags) and the same API written with the kubebuilder markers
// that k8stags.Table names (testdata/markers) give the same CRD, byte for
// byte; the tags' CRD is also the committed one, which the API server test
// of pkg/validation installs.
func TestTagsGiveTheMarkersCRD(t *testing.T) {
	t.Parallel()
	tags, warnings := crds(t, "testdata/tags")
	assert.Empty(t, warnings, "every tag of the fixture is supported")
	markers, _ := crds(t, "testdata/markers")
	require.NotEmpty(t, tags)
	assert.Equal(t, markers, tags)
	for name, data := range tags {
		path := filepath.Join("testdata", "tags", "config", "crd", name)
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./gen/k8stags -update to write it")
		assert.Equal(t, string(want), data, "%s is stale: run go test ./gen/k8stags -update", path)
	}
}

// crds runs opgen's CRD generator on the fixture project at dir and
// returns its manifests by file name, and the run's warnings.
func crds(t *testing.T, dir string) (map[string]string, []string) {
	t.Helper()
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, map[string]gen.Generator{"crd": crd.Generator{}})
	require.NoError(t, err)
	out := map[string]string{}
	for path, data := range res.Output.Files() {
		out[filepath.Base(path)] = string(data)
	}
	var warnings []string
	root, _ := filepath.Abs(dir)
	for _, w := range (&gen.RunError{Errors: res.Warnings}).Relative(root).Errors {
		warnings = append(warnings, strings.TrimSpace(w.Error()))
	}
	return out, warnings
}

// TestWarnings: tags a CRD cannot read are warnings at their line, with
// the fix; a tag and a kubebuilder marker that bound a field differently
// are a warning at the field, and the CRD holds the stricter bound. The
// run succeeds: validation-gen accepts all of them. Another generator's
// +k8s: tag is none of opgen's business.
func TestWarnings(t *testing.T) {
	t.Parallel()
	crds, warnings := crds(t, "testdata/warnings")
	want := []string{
		"apis/warn/v1/gauge_types.go:26:2: GaugeSpec.Name: +k8s:maxLength=10 and +kubebuilder:validation:MaxLength=20 bound it differently; the CRD holds the stricter, 10: make them agree",
		"apis/warn/v1/gauge_types.go:30:2: GaugeSpec.Size: +k8s:minimum=5 and +kubebuilder:validation:Minimum=1 bound it differently; the CRD holds the stricter, 5: make them agree",
		"apis/warn/v1/gauge_types.go:33:2: GaugeSpec.Mode: +k8s:required and +optional (or +kubebuilder:validation:Optional) disagree; the CRD makes the field optional, as controller-tools reads the kubebuilder marker first: remove one",
		"apis/warn/v1/gauge_types.go:35:2: +k8s:format=k8s-ip gives the CRD nothing: format k8s-ip has no CRD equivalent (a CRD checks k8s-short-name, k8s-long-name, k8s-uuid, k8s-label-key, k8s-prefixed-label-key, k8s-label-value and k8s-path-segment-name): write the check with +kubebuilder:validation:Pattern or +kubebuilder:validation:XValidation",
		"apis/warn/v1/gauge_types.go:38:2: +k8s:ifEnabled(Feature)=+k8s:maxLength=3 gives the CRD nothing: +k8s:ifEnabled enforces its payload only under an option (a feature gate) of the Kubernetes API server, and a CRD has no such options: write the payload tag alone to enforce it always, or remove the line",
		"apis/warn/v1/gauge_types.go:41:2: +k8s:customValidation gives the CRD nothing: +k8s:customValidation calls a hand-written Go function, which a CRD cannot run: write the rule with +kubebuilder:validation:XValidation, or check it in a validating webhook (+opgen:webhook:validate)",
		"apis/warn/v1/gauge_types.go:44:2: +k8s:eachVal=+k8s:alpha=+k8s:maxLength=3 gives the CRD nothing: +k8s:alpha marks a validation of Kubernetes' own types that the API server checks only under a feature gate: write the payload tag alone to enforce it in the CRD, or remove the line",
		"apis/warn/v1/gauge_types.go:47:2: +k8s:eachKey=+k8s:enum gives the CRD nothing: +k8s:enum cannot be checked on a map key or a subfield, which have no schema of their own in a CRD: write the rule with +kubebuilder:validation:XValidation",
	}
	require.Len(t, warnings, len(want)+1, "%q", warnings)
	assert.Equal(t, want, warnings[:len(want)])
	assert.Contains(t, warnings[len(want)], "gauge_types.go:50:2: +k8s:subfield(name=+k8s:required does not parse as a tag")
	crd := crds["warn.opgen.dev_gauges.yaml"]
	for _, want := range []string{"maxLength: 10\n", "minimum: 5\n"} {
		assert.Contains(t, crd, want, "the stricter bound")
	}
	for _, gone := range []string{"maxLength: 20\n", "maxLength: 3\n", "minimum: 1\n"} {
		assert.NotContains(t, crd, gone)
	}
}

// TestTableListsEveryTagOfValidationGen: Table has a row for each tag
// that validation-gen of the module's code-generator defines (the
// k8s:<name> constants of cmd/validation-gen/validators), and no other; a
// new code-generator with a new tag fails here until the row says what
// opgen does with it.
func TestTableListsEveryTagOfValidationGen(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/code-generator").Output()
	require.NoError(t, err, "go list -m k8s.io/code-generator")
	dir := filepath.Join(strings.TrimSpace(string(out)), "cmd", "validation-gen", "validators")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	constant := regexp.MustCompile(`(?m)^\s*\w+\s*=\s*"(k8s:[A-Za-z]+)"|tagName:\s*"(k8s:[A-Za-z]+)"`)
	defined := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range constant.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]+m[2]] = true
		}
	}
	require.NotEmpty(t, defined, "no tag constants found in %s", dir)
	listed := map[string]bool{}
	for _, info := range k8stags.Table {
		listed[info.Tag] = true
		assert.NotEqual(t, info.Supported(), info.Why != "", "%s: a row says what the CRD gets or why not, not both", info.Tag)
	}
	assert.Equal(t, defined, listed, "k8stags.Table and the tags of %s differ", dir)
}

// TestTableIsDocumented: docs/generate.md has a row for every tag of
// Table, in the table of the tags read or of those not read.
func TestTableIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/generate.md")
	require.NoError(t, err)
	for _, info := range k8stags.Table {
		text := info.Schema
		if !info.Supported() {
			text = info.Why
		}
		row := "| `+" + info.Tag + "` | " + strings.ReplaceAll(text, "|", `\|`) + " |"
		assert.Contains(t, string(doc), row, "docs/generate.md: the row of +%s", info.Tag)
	}
}
