// Package sample builds a sample object of a CRD's version from its
// schema: every required field, filled with a value its schema accepts
// (its default, the first value of its enum, the minimum of a number, a
// string of the allowed length), and every field that has a default, with
// the default, so that it shows what the server stores. Patterns and CEL
// rules are not solved: a field with a pattern gets a value the user may
// have to edit.
//
// opgen generate writes the samples of config/samples with it, and
// pkg/optest builds the objects of tests with it; it imports no part of
// the generator.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package sample

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// YAML returns the YAML of a sample object of c's version v.
func YAML(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) ([]byte, error) {
	kind := c.Spec.Names.Kind
	obj := map[string]any{
		"apiVersion": c.Spec.Group + "/" + v.Name,
		"kind":       kind,
		"metadata":   map[string]any{"name": strings.ToLower(kind) + "-sample"},
	}
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		if spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]; ok {
			obj["spec"] = value(spec)
		}
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("sample %s %s: %w", v.Name, kind, err)
	}
	head := fmt.Sprintf("# A sample %s (%s/%s): its required fields and defaults.\n# Written once by opgen generate; edit it freely, it is never overwritten.\n", kind, c.Spec.Group, v.Name)
	return append([]byte(head), data...), nil
}

// value returns a value that p accepts.
func value(p apiextensionsv1.JSONSchemaProps) any {
	if p.Default != nil {
		if v, ok := decode(p.Default.Raw); ok {
			return v
		}
	}
	if len(p.Enum) > 0 {
		if v, ok := decode(p.Enum[0].Raw); ok {
			return v
		}
	}
	switch {
	case p.XIntOrString:
		return 1
	case p.Type == "object":
		return object(p)
	case p.Type == "array":
		return array(p)
	case p.Type == "string":
		return str(p)
	case p.Type == "integer" || p.Type == "number":
		return number(p)
	case p.Type == "boolean":
		return false
	}
	return map[string]any{}
}

func decode(raw []byte) (any, bool) {
	var v any
	return v, json.Unmarshal(raw, &v) == nil
}

// object fills the required properties and those with defaults.
func object(p apiextensionsv1.JSONSchemaProps) map[string]any {
	out := map[string]any{}
	for _, name := range p.Required {
		if prop, ok := p.Properties[name]; ok {
			out[name] = value(prop)
		}
	}
	for name, prop := range p.Properties {
		if prop.Default != nil {
			out[name] = value(prop)
		}
	}
	return out
}

func array(p apiextensionsv1.JSONSchemaProps) []any {
	out := []any{}
	if p.MinItems == nil || p.Items == nil || p.Items.Schema == nil {
		return out
	}
	for range *p.MinItems {
		out = append(out, value(*p.Items.Schema))
	}
	return out
}

func str(p apiextensionsv1.JSONSchemaProps) string {
	switch p.Format {
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "date":
		return "2026-01-01"
	case "duration":
		return "1m"
	}
	s := "example"
	if p.MinLength != nil && int64(len(s)) < *p.MinLength {
		s += strings.Repeat("x", int(*p.MinLength)-len(s))
	}
	if p.MaxLength != nil && int64(len(s)) > *p.MaxLength {
		s = s[:*p.MaxLength]
	}
	return s
}

func number(p apiextensionsv1.JSONSchemaProps) any {
	n := 1.0
	if p.Minimum != nil {
		n = *p.Minimum
		if p.ExclusiveMinimum {
			n++
		}
	}
	if p.Maximum != nil && n > *p.Maximum {
		n = *p.Maximum
	}
	if p.Type == "integer" {
		return int64(n)
	}
	return n
}
