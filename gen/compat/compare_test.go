package compat

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// crdOf returns a CRD of Widget whose v1 spec has the schema in specYAML.
func crdOf(t *testing.T, specYAML string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var spec apiextensionsv1.JSONSchemaProps
	require.NoError(t, yaml.Unmarshal([]byte(specYAML), &spec))
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget"},
		Scope: apiextensionsv1.NamespaceScoped,
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type:       "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"metadata": {Type: "object"}, "spec": spec},
			}},
		}},
	}}
}

// TestCompareKeywords compares one schema keyword at a time: every change
// that breaks stored or served objects is a finding of its rule, and the
// change back, which loosens, is none.
func TestCompareKeywords(t *testing.T) {
	cases := []struct {
		name      string
		old, cur  string
		rule      Rule
		path      string
		change    string
		ratchets  bool // the effect says existing objects stay writable
		looserToo bool // cur -> old is a finding too
	}{
		{"type", "type: integer", "type: string", TypeChanged, "spec", "type changed from integer to string", false, true},
		{"narrower integer", "{type: integer, format: int64}", "{type: integer, format: int32}", TypeChanged, "spec", "type changed from integer (int64) to integer (int32)", false, false},
		{"string format", "type: string", "{type: string, format: date-time}", TypeChanged, "spec", "type changed from string to string (date-time)", false, true},
		{"int-or-string", "type: integer", "x-kubernetes-int-or-string: true", TypeChanged, "spec", "type changed from integer to int-or-string", false, true},
		{"default added", "type: integer", "{type: integer, default: 3}", DefaultChanged, "spec", "default 3 added", false, true},
		{"default changed", "{type: integer, default: 3}", "{type: integer, default: 5}", DefaultChanged, "spec", "default changed from 3 to 5", false, true},
		{"enum added", "type: string", "{type: string, enum: [a, b]}", EnumAdded, "spec", `enum added ("a", "b") to a field that took any value`, true, false},
		{"enum value removed", "{type: string, enum: [a, b]}", "{type: string, enum: [a]}", EnumValueRemoved, "spec", `enum value "b" removed`, true, false},
		{"minimum added", "type: integer", "{type: integer, minimum: 1}", MinimumRaised, "spec", "minimum 1 added", true, false},
		{"minimum raised", "{type: integer, minimum: 1}", "{type: integer, minimum: 2}", MinimumRaised, "spec", "minimum raised from 1 to 2", true, false},
		{"minimum exclusive", "{type: integer, minimum: 1}", "{type: integer, minimum: 1, exclusiveMinimum: true}", MinimumRaised, "spec", "minimum 1 made exclusive (exclusiveMinimum)", true, false},
		{"minLength", "{type: string, minLength: 1}", "{type: string, minLength: 3}", MinimumRaised, "spec", "minLength raised from 1 to 3", true, false},
		{"minItems", "{type: array, items: {type: string}}", "{type: array, items: {type: string}, minItems: 1}", MinimumRaised, "spec", "minItems 1 added", true, false},
		{"minProperties", "{type: object, minProperties: 1}", "{type: object, minProperties: 2}", MinimumRaised, "spec", "minProperties raised from 1 to 2", true, false},
		{"maximum lowered", "{type: integer, maximum: 10}", "{type: integer, maximum: 9.5}", MaximumLowered, "spec", "maximum lowered from 10 to 9.5", true, false},
		{"maximum exclusive", "{type: integer, maximum: 10}", "{type: integer, maximum: 10, exclusiveMaximum: true}", MaximumLowered, "spec", "maximum 10 made exclusive (exclusiveMaximum)", true, false},
		{"maxLength", "type: string", "{type: string, maxLength: 63}", MaximumLowered, "spec", "maxLength 63 added", true, false},
		{"maxItems", "{type: array, items: {type: string}, maxItems: 5}", "{type: array, items: {type: string}, maxItems: 4}", MaximumLowered, "spec", "maxItems lowered from 5 to 4", true, false},
		{"maxProperties", "{type: object, maxProperties: 5}", "{type: object, maxProperties: 4}", MaximumLowered, "spec", "maxProperties lowered from 5 to 4", true, false},
		{"pattern added", "type: string", "{type: string, pattern: '^a$'}", PatternChanged, "spec", `pattern "^a$" added`, true, false},
		{"pattern changed", "{type: string, pattern: '^a$'}", "{type: string, pattern: '^a+$'}", PatternChanged, "spec", `pattern changed from "^a$" to "^a+$" (opgen cannot tell whether a regular expression is looser)`, true, true},
		{"CEL rule", "type: object", "{type: object, x-kubernetes-validations: [{rule: 'self.a > 0'}]}", CELRuleAdded, "spec", `new CEL rule "self.a > 0"`, true, false},
		{"transition rule", "type: object", "{type: object, x-kubernetes-validations: [{rule: 'self.a >= oldSelf.a'}]}", CELRuleAdded, "spec", `new CEL rule "self.a >= oldSelf.a"`, false, false},
		{"required", "{type: object, properties: {a: {type: string}}}", "{type: object, properties: {a: {type: string}}, required: [a]}", RequiredAdded, "spec.a", "an optional field became required", false, false},
		{"new required", "type: object", "{type: object, properties: {a: {type: string}}, required: [a]}", RequiredAdded, "spec.a", "a new required field", false, true},
		{"field removed", "{type: object, properties: {a: {type: string}}}", "type: object", FieldRemoved, "spec.a", "the field is gone", false, false},
		{"list type", "{type: array, items: {type: string}}", "{type: array, items: {type: string}, x-kubernetes-list-type: set}", ListTypeChanged, "spec", "x-kubernetes-list-type changed from atomic to set", false, true},
		{"list map keys", "{type: array, items: {type: object, properties: {a: {type: string}, b: {type: string}}, required: [a, b]}, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [a]}", "{type: array, items: {type: object, properties: {a: {type: string}, b: {type: string}}, required: [a, b]}, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [a, b]}", ListMapKeysChanged, "spec", "x-kubernetes-list-map-keys changed from [a] to [a, b]", false, true},
		{"nullable", "{type: string, nullable: true}", "type: string", NullableRemoved, "spec", "nullable removed", false, false},
		{"preserve unknown fields", "{type: object, x-kubernetes-preserve-unknown-fields: true}", "type: object", PreserveUnknownFieldsRemoved, "spec", "x-kubernetes-preserve-unknown-fields removed", false, false},
		{"additionalProperties", "{type: object, additionalProperties: {type: string}}", "{type: object, properties: {a: {type: string}}}", AdditionalPropertiesRemoved, "spec", "additionalProperties removed: the map takes only the keys its properties name", false, true},
		{"anyOf", "{type: object, properties: {a: {type: string}, b: {type: string}}}", "{type: object, properties: {a: {type: string}, b: {type: string}}, anyOf: [{required: [a]}, {required: [b]}]}", CompositionChanged, "spec", "anyOf added (opgen cannot tell whether the new checks are looser)", true, false},
		{"oneOf changed", "{type: object, oneOf: [{required: [a]}, {required: [b]}]}", "{type: object, oneOf: [{required: [a]}]}", CompositionChanged, "spec", "oneOf changed (opgen cannot tell whether the new checks are looser)", true, true},
		{"multipleOf", "type: integer", "{type: integer, multipleOf: 2}", UnknownChange, "spec", "multipleOf 2 added, a change the gate has no rule for", false, true},
		{"map type", "{type: object, additionalProperties: {type: string}}", "{type: object, additionalProperties: {type: string}, x-kubernetes-map-type: atomic}", UnknownChange, "spec", `x-kubernetes-map-type "atomic" added, a change the gate has no rule for`, false, true},
		{"description", "{type: string, description: a}", "{type: string, description: b}", DescriptionChanged, "spec", "description changed", false, true},
		{"in items", "{type: array, items: {type: integer}}", "{type: array, items: {type: integer, minimum: 1}}", MinimumRaised, "spec[*]", "minimum 1 added", true, false},
		{"in map values", "{type: object, additionalProperties: {type: string}}", "{type: object, additionalProperties: {type: string, maxLength: 3}}", MaximumLowered, "spec[*]", "maxLength 3 added", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Compare(crdOf(t, c.old), crdOf(t, c.cur))
			require.Len(t, got, 1, "%+v", got)
			f := got[0]
			assert.Equal(t, c.rule, f.Rule)
			assert.Equal(t, c.path, f.Path.String())
			assert.Equal(t, c.change, f.Change)
			assert.Equal(t, "Widget", f.Kind)
			assert.Equal(t, "v1", f.Version)
			assert.Equal(t, c.ratchets, strings.HasPrefix(f.Effect, "existing objects stay writable"), f.Effect)
			back := Compare(crdOf(t, c.cur), crdOf(t, c.old))
			if c.looserToo {
				assert.NotEmpty(t, back)
			} else {
				assert.Empty(t, back, "the change back loosens")
			}
		})
	}
}

// TestCompareSafe: changes that break nothing stored or served.
func TestCompareSafe(t *testing.T) {
	cases := []struct{ name, old, cur string }{
		{"new optional field", "type: object", "{type: object, properties: {a: {type: string}}}"},
		{"new required field with a default", "type: object", "{type: object, properties: {a: {type: string, default: x}}, required: [a]}"},
		{"new enum value", "{type: string, enum: [a]}", "{type: string, enum: [a, b]}"},
		{"wider integer", "{type: integer, format: int32}", "{type: integer, format: int64}"},
		{"looser bounds", "{type: integer, minimum: 1, maximum: 5}", "{type: integer, minimum: 0, maximum: 6}"},
		{"bounds and pattern removed", "{type: string, minLength: 1, maxLength: 5, pattern: a}", "type: string"},
		{"a rule's message", "{type: object, x-kubernetes-validations: [{rule: 'self.a > 0', message: m}]}", "{type: object, x-kubernetes-validations: [{rule: 'self.a > 0', message: n}]}"},
		{"a rule removed", "{type: object, x-kubernetes-validations: [{rule: 'self.a > 0'}]}", "type: object"},
		{"the same default, spelt another way", "{type: object, default: {a: 1, b: 2}}", `{type: object, default: {"b": 2, "a": 1}}`},
		{"descriptions (a rule that is off by default)", "{type: string, description: a}", "{type: string, description: b}"},
		{"a new short name", "type: object", "type: object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, cur := crdOf(t, c.old), crdOf(t, c.cur)
			cur.Spec.Names.ShortNames = []string{"wd"}
			var failing []Finding
			for _, f := range Compare(old, cur) {
				if DefaultSeverity(f.Rule) != Off {
					failing = append(failing, f)
				}
			}
			assert.Empty(t, failing)
		})
	}
}

// TestCompareVersions: scope and versions, and that metadata, which the
// API server owns, is not compared.
func TestCompareVersions(t *testing.T) {
	old, cur := crdOf(t, "type: object"), crdOf(t, "type: object")
	cur.Spec.Scope = apiextensionsv1.ClusterScoped
	cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string", MaxLength: ptr.To[int64](5)}}}
	got := Compare(old, cur)
	require.Len(t, got, 1)
	assert.Equal(t, ScopeChanged, got[0].Rule)
	assert.Equal(t, "Widget", got[0].Subject())

	withAlpha := func(served, storage bool) *apiextensionsv1.CustomResourceDefinition {
		c := crdOf(t, "type: object")
		alpha := *c.Spec.Versions[0].DeepCopy()
		alpha.Name, alpha.Served, alpha.Storage = "v1alpha1", served, storage
		c.Spec.Versions[0].Storage = !storage
		c.Spec.Versions = append(c.Spec.Versions, alpha)
		return c
	}
	got = Compare(withAlpha(true, false), crdOf(t, "type: object"))
	require.Len(t, got, 1)
	assert.Equal(t, VersionRemoved, got[0].Rule)
	assert.Equal(t, "v1alpha1", got[0].Name)
	assert.Contains(t, got[0].Change, "served by the last release")
	got = Compare(withAlpha(true, true), crdOf(t, "type: object"))
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Effect, "status.storedVersions")
	assert.Empty(t, Compare(withAlpha(false, false), crdOf(t, "type: object")), "an unserved version that stores nothing goes")
	assert.Empty(t, Compare(crdOf(t, "type: object"), withAlpha(true, false)), "a new version")
}

// TestCompareUnknownVersionFields: a version's subresources and the CRD's
// names are compared too; a new short name is not a change.
func TestCompareUnknownVersionFields(t *testing.T) {
	old, cur := crdOf(t, "type: object"), crdOf(t, "type: object")
	old.Spec.Names.ShortNames = []string{"wd", "wdg"}
	cur.Spec.Names.ShortNames = []string{"wdg", "w"}
	cur.Spec.Versions[0].Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	got := Compare(old, cur)
	require.Len(t, got, 2, "%+v", got)
	assert.Equal(t, `names.shortNames changed from ["wd","wdg"] to ["wdg"], a change the gate has no rule for`, got[0].Change)
	assert.Equal(t, `subresources {"status":{}} added, a change the gate has no rule for`, got[1].Change)
	assert.Equal(t, "Widget v1", got[1].Subject())
}

// TestCompareServed: a version stricter than another served beside it is
// a finding unless the last release's versions differed the same way; a
// type or field that differs between versions is their conversion's.
func TestCompareServed(t *testing.T) {
	twoVersions := func(v1, v2 string) *apiextensionsv1.CustomResourceDefinition {
		c := crdOf(t, v1)
		second := *crdOf(t, v2).Spec.Versions[0].DeepCopy()
		second.Name, second.Storage = "v2", false
		c.Spec.Versions = append(c.Spec.Versions, second)
		return c
	}
	loose, strict := "{type: string, maxLength: 10}", "{type: string, maxLength: 5}"
	got := CompareServed(crdOf(t, loose), twoVersions(loose, strict))
	require.Len(t, got, 1)
	assert.Equal(t, ServedVersionStricter, got[0].Rule)
	assert.Equal(t, "v2", got[0].Version)
	assert.Equal(t, "stricter than v1, served beside it: maxLength lowered from 10 to 5", got[0].Change)
	assert.Empty(t, CompareServed(twoVersions(loose, strict), twoVersions(loose, strict)), "the last release differed the same way")
	assert.Empty(t, CompareServed(crdOf(t, loose), twoVersions(loose, "type: integer")), "a type is the conversion's")
	unserved := twoVersions(loose, strict)
	unserved.Spec.Versions[1].Served = false
	assert.Empty(t, CompareServed(crdOf(t, loose), unserved), "v2 is not served")
	assert.Empty(t, CompareServed(crdOf(t, "type: object"), twoVersions("type: object", "{type: object, properties: {a: {type: string}}, required: [a]}")), "a field v1 does not have is filled in by the conversion")
}

func TestUsesOldSelf(t *testing.T) {
	for rule, want := range map[string]bool{
		"self >= oldSelf":                        true,
		"!has(oldSelf.a) || self.a == oldSelf.a": true,
		"oldSelf.hasValue()":                     true,
		"self.a > 0":                             false,
		`self.note != "oldSelf"`:                 false,
		"self.all(x, x.oldSelf > 0)":             false,
		"this does not parse (":                  true,
	} {
		assert.Equal(t, want, usesOldSelf(rule), rule)
	}
}

func TestCELEffect(t *testing.T) {
	p := Path{{Name: "spec"}, {Name: "size"}}
	assert.Contains(t, celEffect(p, apiextensionsv1.ValidationRule{Rule: "self > 0"}), "existing objects stay writable")
	transition := celEffect(p, apiextensionsv1.ValidationRule{Rule: "self >= oldSelf"})
	assert.Contains(t, transition, "existing objects may become unwritable: the API server never ratchets a rule that uses oldSelf")
	assert.NotContains(t, transition, "create")
	assert.Contains(t, celEffect(p, apiextensionsv1.ValidationRule{Rule: "self >= oldSelf", OptionalOldSelf: ptr.To(true)}), "on every create too")
}

func TestPathString(t *testing.T) {
	assert.Equal(t, "the object", Path(nil).String())
	assert.Equal(t, "spec.ports[*].number", Path(nil).Child("spec").Child("ports").items().Child("number").String())
	assert.Equal(t, "spec.labels[*]", Path(nil).Child("spec").Child("labels").values().String())
}
