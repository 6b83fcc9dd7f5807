package compat

import (
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// CompareServed returns where one version of crd refuses a value that
// another version, served beside it, takes, and the versions of released
// did not differ so: a client of the looser version writes objects that
// the stricter version's clients read and cannot write back changed, nor
// copy. Only the checks of values count (enum, bounds, pattern, CEL rules
// without oldSelf, required, nullable): fields, types and defaults may
// differ between versions, whose conversion maps one to the other.
func CompareServed(released, crd *apiextensionsv1.CustomResourceDefinition) []Finding {
	before := map[string]bool{}
	for _, f := range servedPairs(released) {
		before[servedKey(f)] = true
	}
	var out []Finding
	for _, f := range servedPairs(crd) {
		if !before[servedKey(f)] {
			out = append(out, f)
		}
	}
	return out
}

func servedKey(f Finding) string { return f.Version + "\x00" + f.Path.String() + "\x00" + f.Change }

// servedPairs compares every two versions crd serves, both ways.
func servedPairs(crd *apiextensionsv1.CustomResourceDefinition) []Finding {
	var out []Finding
	for _, a := range crd.Spec.Versions {
		for _, b := range crd.Spec.Versions {
			if a.Name == b.Name || !a.Served || !b.Served || schemaOf(&a) == nil || schemaOf(&b) == nil {
				continue
			}
			c := &comparison{kind: crd.Spec.Names.Kind, version: b.Name, served: true}
			c.node(nil, schemaOf(&a), schemaOf(&b))
			for _, f := range c.findings {
				out = append(out, stricter(f, a.Name))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return servedKey(out[i]) < servedKey(out[j]) })
	return out
}

func schemaOf(v *apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.JSONSchemaProps {
	if v.Schema == nil {
		return nil
	}
	return v.Schema.OpenAPIV3Schema
}

// stricter turns a finding of version f.Version against the looser
// version into a finding of served-version-stricter.
func stricter(f Finding, looser string) Finding {
	f.Rule = ServedVersionStricter
	f.Change = fmt.Sprintf("stricter than %s, served beside it: %s", looser, f.Change)
	f.Effect = fmt.Sprintf("clients of %s write values that %s refuses, so clients of %s read objects they cannot write back with %s changed, nor create a copy of (an update that leaves it as it was passes)", looser, f.Version, f.Version, f.Path)
	f.Fix = fmt.Sprintf("give %s and %s the same check, or make the conversion from %s turn such values into ones %s takes", looser, f.Version, looser, f.Version)
	return f
}
