package servertest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNewRulesHold replays the fixtures of the rules that issue 43 added
// and checks what their messages say on the API server: pruning for
// nullable, preserve-unknown-fields and additionalProperties, duplicates
// and ratcheting for list types, ratcheting for anyOf, none for a rule
// on the object's root, and what a stricter served version refuses.
func TestNewRulesHold(t *testing.T) {
	long := strings.Repeat("a", 80)
	replayAll(t, []upgrade{
		{
			fixture: "name-rule-added", name: "1-widget", spec: map[string]any{"size": int64(1)},
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				r.serves(t, func() bool { return r.label() != nil })
				assert.ErrorContains(t, r.label(), "names its v1.Service after itself", "an update of the labels alone, as a finalizer's removal is, is refused: the rule is not ratcheted")
			},
		},
		{
			fixture: "nullable-removed", spec: map[string]any{"size": int64(1), "note": nil},
			before: func(t *testing.T, r *run) { require.True(t, has(r.get(t), "spec", "note"), "null is stored") },
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				r.serves(t, func() bool { return !has(r.get(t), "spec", "note") })
			},
		},
		{
			fixture: "preserve-unknown-fields-removed", spec: map[string]any{"config": map[string]any{"mode": "a", "extra": "x"}},
			before: func(t *testing.T, r *run) {
				require.True(t, has(r.get(t), "spec", "config", "extra"), "the unknown field is kept")
			},
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				r.serves(t, func() bool { return !has(r.get(t), "spec", "config", "extra") })
				assert.True(t, has(r.get(t), "spec", "config", "mode"))
			},
		},
		{
			fixture: "additional-properties-removed", spec: map[string]any{"labels": map[string]any{"app": "a", "team": "b"}},
			before: func(t *testing.T, r *run) { require.True(t, has(r.get(t), "spec", "labels", "team")) },
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				r.serves(t, func() bool { return !has(r.get(t), "spec", "labels", "team") })
				assert.True(t, has(r.get(t), "spec", "labels", "app"))
			},
		},
		{
			fixture: "list-type-changed", spec: map[string]any{"tags": []any{"a", "a"}},
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				r.serves(t, func() bool { return r.dryRunCreate(map[string]any{"tags": []any{"b", "b"}}) != nil })
				assert.NoError(t, r.label(), "an object that holds duplicates stays writable")
				assert.NoError(t, r.set("tags", []any{"c", "c"}), "while it does")
				require.NoError(t, r.set("tags", []any{"c"}))
				assert.Error(t, r.set("tags", []any{"d", "d"}), "an object without duplicates may not get them")
			},
		},
		{
			fixture: "enum-added", as: "composition-changed", spec: map[string]any{"size": int64(1), "color": "blue"},
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
				color := spec.Properties["color"]
				require.NotEmpty(t, color.Enum)
				color.AnyOf, color.Enum = []apiextensionsv1.JSONSchemaProps{{Enum: color.Enum}}, nil
				spec.Properties["color"] = color
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			},
			check: ratcheted("color", "blue", "yellow"),
		},
		{
			fixture: "served-version-stricter", spec: map[string]any{"name": long},
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				v2 := r.in("v2")
				v2.serves(t, func() bool { return v2.dryRunCreate(map[string]any{"name": long}) != nil })
				assert.NoError(t, r.dryRunCreate(map[string]any{"name": long}), "a client of v1 writes the name")
				assert.NoError(t, v2.label(), "a client of v2 updates the object, leaving the name as it was")
				assert.Error(t, v2.set("name", long[1:]), "but cannot write another such name back")
				assert.NoError(t, r.set("name", long[1:]), "which a client of v1 can")
			},
		},
	})
}

func has(obj *unstructured.Unstructured, fields ...string) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	return found
}
