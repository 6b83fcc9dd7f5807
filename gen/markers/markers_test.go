package markers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen/markers"
)

func TestParseKindRef(t *testing.T) {
	ok := map[string]schema.GroupVersionKind{
		"apps/v1.Deployment":         {Group: "apps", Version: "v1", Kind: "Deployment"},
		"v1.Service":                 {Version: "v1", Kind: "Service"},
		"example.com/v1beta1.Widget": {Group: "example.com", Version: "v1beta1", Kind: "Widget"},
		" batch/v1.Job ":             {Group: "batch", Version: "v1", Kind: "Job"},
	}
	for ref, want := range ok {
		t.Run(ref, func(t *testing.T) {
			got, err := markers.ParseKindRef(ref)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Equal(t, strings.TrimSpace(ref), markers.FormatKindRef(got))
		})
	}
	bad := map[string]string{
		"apps.Deployment":    `malformed owns reference "apps.Deployment" ("apps" is not a version like v1 or v1beta1)`,
		"apps/v1":            `malformed owns reference "apps/v1" (no kind after the version)`,
		"apps/v1.deployment": `malformed owns reference "apps/v1.deployment" (the kind must be one capitalized word)`,
		"/v1.Service":        `malformed owns reference "/v1.Service" ("v1" is not a version like v1 or v1beta1)`,
		"Deployment":         `malformed owns reference "Deployment" (no kind after the version)`,
	}
	for ref, want := range bad {
		t.Run(ref, func(t *testing.T) {
			_, err := markers.ParseKindRef(ref)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
			assert.Contains(t, err.Error(), "write [group/]version.Kind")
		})
	}
}

func TestMarkersApply(t *testing.T) {
	reg := &ctmarkers.Registry{}
	require.NoError(t, markers.Register(reg))
	spec := &markers.ControllerSpec{}
	for _, line := range []string{
		"+opgen:controller",
		"+opgen:controller:owns=apps/v1.Deployment;v1.Service",
		"+opgen:controller:owns=v1.Service;v1.ConfigMap",
		"+opgen:controller:reconcileEvery=1h30m",
		"+opgen:controller:workers=4",
	} {
		def := reg.Lookup(line, ctmarkers.DescribesType)
		require.NotNil(t, def, line)
		v, err := def.Parse(line)
		require.NoError(t, err, line)
		require.NoError(t, v.(markers.Applier).ApplyToController(spec), line)
	}
	assert.Equal(t, []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Version: "v1", Kind: "Service"},
		{Version: "v1", Kind: "ConfigMap"},
	}, spec.Owns, "in order, without repeats")
	assert.Equal(t, "1h30m0s", spec.ReconcileEvery.String())
	assert.Equal(t, 4, spec.Workers)
}

// TestHandlerMarkersApply: for and labelSelector, the markers of a handler
// type of a built-in kind.
func TestHandlerMarkersApply(t *testing.T) {
	reg := &ctmarkers.Registry{}
	require.NoError(t, markers.Register(reg))
	apply := func(spec *markers.ControllerSpec, line string) error {
		def := reg.Lookup(line, ctmarkers.DescribesType)
		require.NotNil(t, def, line)
		v, err := def.Parse(line)
		require.NoError(t, err, line)
		return v.(markers.Applier).ApplyToController(spec)
	}
	spec := &markers.ControllerSpec{}
	require.NoError(t, apply(spec, "+opgen:controller:for=apps/v1.Deployment"))
	require.NoError(t, apply(spec, "+opgen:controller:for=apps/v1.Deployment"), "a repeat is harmless")
	require.NoError(t, apply(spec, `+opgen:controller:labelSelector="tier in (web,api),!canary"`))
	assert.Equal(t, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, spec.For)
	assert.Equal(t, "tier in (web,api),!canary", spec.LabelSelector)

	cases := map[string]string{
		"+opgen:controller:for=v1.Service":            "for=v1.Service: the type already handles apps/v1.Deployment; a handler type handles one kind, so declare another type for v1.Service",
		"+opgen:controller:for=Pod":                   `malformed for reference "Pod" (no kind after the version): write [group/]version.Kind, such as apps/v1.Deployment, or v1.Service for the core group`,
		"+opgen:controller:labelSelector==web":        "labelSelector==web is not a label selector (",
		`+opgen:controller:labelSelector=""`:          "labelSelector= is not a label selector (it is empty)",
		"+opgen:controller:labelSelector=a b":         "labelSelector=a b is not a label selector (",
		"+opgen:controller:labelSelector=tier in web": "write it like app=web, tier in (web,api) or !canary, quoted when it holds a comma",
	}
	for line, want := range cases {
		t.Run(line, func(t *testing.T) {
			err := apply(spec, line)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
			assert.NotContains(t, err.Error(), "separated by ;", "for= takes one kind")
		})
	}
}

func TestEveryMarkerHasHelp(t *testing.T) {
	for _, def := range markers.Definitions {
		h := markers.Help(def)
		require.NotNil(t, h, def.Name)
		assert.Contains(t, h.Details, "// +"+def.Name, "the godoc of %s shows its marker line", def.Name)
	}
}

func TestUnknownSuggestsTheClosestMarker(t *testing.T) {
	cases := map[string]string{
		"opgen:controler":              "did you mean +opgen:controller?",
		"opgen:controller:own":         "did you mean +opgen:controller:owns?",
		"opgen:controller:reconcileIn": "did you mean +opgen:controller:reconcileEvery?",
		"opgen:webhook:validating":     "did you mean +opgen:webhook:validate?",
		"opgen:webhook:defaults":       "did you mean +opgen:webhook:default?",
		"opgen:webhooks:validate":      "did you mean +opgen:webhook:validate?",
	}
	for name, want := range cases {
		assert.Contains(t, markers.Unknown(name).Error(), want)
	}
	assert.NotContains(t, markers.Unknown("opgen:admission:reject").Error(), "did you mean")
}

func ExampleParseKindRef() {
	gvk, _ := markers.ParseKindRef("apps/v1.Deployment")
	fmt.Println(gvk.Group, gvk.Version, gvk.Kind)
	core, _ := markers.ParseKindRef("v1.Service")
	fmt.Printf("%q %s %s\n", core.Group, core.Version, core.Kind)
	// Output:
	// apps v1 Deployment
	// "" v1 Service
}

// TestRelatedKindMarkersApply: reads lists kinds like owns; watches takes
// one kind and the name of its mapping function.
func TestRelatedKindMarkersApply(t *testing.T) {
	reg := &ctmarkers.Registry{}
	require.NoError(t, markers.Register(reg))
	apply := func(spec *markers.ControllerSpec, line string) error {
		def := reg.Lookup(line, ctmarkers.DescribesType)
		require.NotNil(t, def, line)
		v, err := def.Parse(line)
		if err != nil {
			return err
		}
		return v.(markers.Applier).ApplyToController(spec)
	}
	spec := &markers.ControllerSpec{}
	require.NoError(t, apply(spec, "+opgen:controller:reads=v1.ConfigMap;apps/v1.Deployment"))
	require.NoError(t, apply(spec, "+opgen:controller:reads=v1.ConfigMap"))
	require.NoError(t, apply(spec, "+opgen:controller:watches=v1.Secret,map=widgetsOfSecret"))
	require.NoError(t, apply(spec, `+opgen:controller:watches=apps/v1.Deployment, map="widgetsOfDeployment"`))
	assert.Equal(t, []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "apps", Version: "v1", Kind: "Deployment"}}, spec.Reads, "in order, without repeats")
	assert.Equal(t, []markers.WatchSpec{
		{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Map: "widgetsOfSecret"},
		{Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Map: "widgetsOfDeployment"},
	}, spec.Watches)

	cases := map[string]string{
		"+opgen:controller:reads=ConfigMap":                    `malformed reads reference "ConfigMap"`,
		"+opgen:controller:watches=v1.Secret":                  "write watches=<[group/]version.Kind>,map=<func>",
		"+opgen:controller:watches=v1.Secret,fn=x":             "write watches=<[group/]version.Kind>,map=<func>",
		"+opgen:controller:watches=v1.Secret,map=1x":           "write watches=<[group/]version.Kind>,map=<func>",
		"+opgen:controller:watches=Secret,map=x":               `malformed watches reference "Secret"`,
		"+opgen:controller:watches=v1.Secret,map=widgetsAgain": "watches=v1.Secret is declared twice (map=widgetsOfSecret and map=widgetsAgain)",
	}
	for line, want := range cases {
		t.Run(line, func(t *testing.T) {
			err := apply(spec, line)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

// A marker's former name still configures the controller, as a synonym
// whose use Renamed warns about with the name to write.
func TestRenamedMarkerStillWorks(t *testing.T) {
	reg := &ctmarkers.Registry{}
	require.NoError(t, markers.Register(reg))
	def := reg.Lookup("+opgen:controller:namesChildren", ctmarkers.DescribesType)
	require.NotNil(t, def)
	val, err := def.Parse("+opgen:controller:namesChildren")
	require.NoError(t, err)
	var spec markers.ControllerSpec
	require.NoError(t, val.(markers.Applier).ApplyToController(&spec))
	assert.True(t, spec.NamesOwned)
	assert.True(t, markers.Known("opgen:controller:namesChildren"))
	assert.Contains(t, markers.Renamed("opgen:controller:namesChildren"), "write +opgen:controller:namesOwned")
	assert.Empty(t, markers.Renamed("opgen:controller:namesOwned"))
}
