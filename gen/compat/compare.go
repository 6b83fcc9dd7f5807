package compat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	celcommon "github.com/google/cel-go/common"
	celast "github.com/google/cel-go/common/ast"
	celparser "github.com/google/cel-go/parser"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Compare returns what in crd breaks the objects of released, the CRD of
// the same resource in the last release, sorted by version and path.
func Compare(released, crd *apiextensionsv1.CustomResourceDefinition) []Finding {
	c := &comparison{kind: crd.Spec.Names.Kind}
	if released.Spec.Scope != crd.Spec.Scope {
		c.add(Finding{
			Rule:   ScopeChanged,
			Change: fmt.Sprintf("scope changed from %s to %s", released.Spec.Scope, crd.Spec.Scope),
			Effect: "the API server refuses to change the scope of an established CRD, so this release cannot be applied over the last one without deleting the CRD, and with it every object of the kind",
			Fix:    fmt.Sprintf("keep the scope %s, or give the new scope to a new kind or group", released.Spec.Scope),
		})
	}
	c.unknownNames(&released.Spec.Names, &crd.Spec.Names)
	for i := range released.Spec.Versions {
		old := &released.Spec.Versions[i]
		cur := version(crd, old.Name)
		if cur == nil {
			c.versionRemoved(old)
			continue
		}
		c.version = old.Name
		c.unknownVersion(old, cur)
		if old.Schema != nil && cur.Schema != nil && old.Schema.OpenAPIV3Schema != nil && cur.Schema.OpenAPIV3Schema != nil {
			c.node(nil, old.Schema.OpenAPIV3Schema, cur.Schema.OpenAPIV3Schema)
		}
	}
	sort.SliceStable(c.findings, func(i, j int) bool {
		a, b := c.findings[i], c.findings[j]
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Path.String() < b.Path.String()
	})
	return c.findings
}

func version(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

type comparison struct {
	kind, version string
	// served says that the versions compared are two versions served
	// together, not a version and its last release.
	served   bool
	findings []Finding
}

func (c *comparison) add(f Finding) {
	f.Kind = c.kind
	if f.Version == "" {
		f.Version = c.version
	}
	c.findings = append(c.findings, f)
}

// versionRemoved reports a released version that is gone, unless the last
// release had already stopped serving it and stored in another: the way
// docs/upgrading.md removes a version.
func (c *comparison) versionRemoved(old *apiextensionsv1.CustomResourceDefinitionVersion) {
	if !old.Served && !old.Storage {
		return
	}
	f := Finding{
		Rule:    VersionRemoved,
		Version: old.Name,
		Name:    old.Name,
		Change:  fmt.Sprintf("version %s, served by the last release, is gone", old.Name),
		Effect:  fmt.Sprintf("clients still using %s get 404 Not Found, and if an earlier release stored objects in %s that were never migrated, the API server refuses the CRD", old.Name, old.Name),
		Fix:     fmt.Sprintf("keep %s for a release with +kubebuilder:unservedversion (and +kubebuilder:deprecatedversion before that), then remove it (go tool opgen help upgrading)", old.Name),
	}
	if old.Storage {
		f.Change = fmt.Sprintf("version %s, the storage version of the last release, is gone", old.Name)
		f.Effect = fmt.Sprintf("the API server refuses a CRD without a version that status.storedVersions still names, so the upgrade fails until the objects stored in %s are migrated (the operator's storage migration does it once another version is the storage version), and clients of %s get 404 Not Found", old.Name, old.Name)
		f.Fix = fmt.Sprintf("keep %s, move the storage version to another one (+kubebuilder:storageversion) and release that first; then stop serving %s (+kubebuilder:unservedversion) for a release before removing it (go tool opgen help upgrading)", old.Name, old.Name)
	}
	c.add(f)
}

// node compares the schema of one node that both versions have. Between
// served versions (c.served) only the checks of values are compared: a
// type, a field or a default may differ between versions, since their
// conversion maps one to the other.
func (c *comparison) node(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if changed := typeChange(old, cur); changed != "" {
		if !c.served {
			c.add(Finding{
				Rule: TypeChanged, Path: p, Change: changed,
				Effect: fmt.Sprintf("clients of %s that decode objects stored with the old type fail, and ratcheting does not help: it only lets an unchanged old value through the API server's validation", c.version),
				Fix:    "keep the type and add a field of the new type beside it, " + newVersionFix,
			})
		}
		return
	}
	if !c.served {
		c.defaults(p, old, cur)
		c.structure(p, old, cur)
		c.unknown(p, old, cur)
	}
	c.nullable(p, old, cur)
	c.enum(p, old, cur)
	c.bounds(p, old, cur)
	c.pattern(p, old, cur)
	c.rules(p, old, cur)
	c.required(p, old, cur)
	c.properties(p, old, cur)
	if old.Items != nil && cur.Items != nil && old.Items.Schema != nil && cur.Items.Schema != nil {
		c.node(p.items(), old.Items.Schema, cur.Items.Schema)
	}
	if old.AdditionalProperties != nil && cur.AdditionalProperties != nil && old.AdditionalProperties.Schema != nil && cur.AdditionalProperties.Schema != nil {
		c.node(p.values(), old.AdditionalProperties.Schema, cur.AdditionalProperties.Schema)
	}
}

// typeChange says how the type of a node changed, or "". A wider integer
// or number format (int32 to int64, float to double) is no change; a
// string's format is part of its type (a string that becomes a
// metav1.Time gets format date-time).
func typeChange(old, cur *apiextensionsv1.JSONSchemaProps) string {
	if old.XIntOrString != cur.XIntOrString {
		return fmt.Sprintf("type changed from %s to %s", typeName(old), typeName(cur))
	}
	if old.Type != cur.Type {
		return fmt.Sprintf("type changed from %s to %s", typeName(old), typeName(cur))
	}
	if old.Format == cur.Format || widens(old.Format, cur.Format) {
		return ""
	}
	return fmt.Sprintf("type changed from %s to %s", typeName(old), typeName(cur))
}

func widens(from, to string) bool {
	return from == "int32" && to == "int64" || from == "float" && to == "double" ||
		from == "" && (to == "int64" || to == "double")
}

func typeName(s *apiextensionsv1.JSONSchemaProps) string {
	name := s.Type
	switch {
	case s.XIntOrString:
		name = "int-or-string"
	case name == "":
		name = "any type"
	}
	if s.Format != "" {
		name += " (" + s.Format + ")"
	}
	return name
}

func (c *comparison) defaults(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if sameJSON(old.Default, cur.Default) {
		return
	}
	f := Finding{Rule: DefaultChanged, Path: p, Fix: "keep the released default, " + newVersionFix}
	switch {
	case old.Default == nil:
		f.Change = fmt.Sprintf("default %s added", raw(cur.Default))
		f.Effect = fmt.Sprintf("the API server defaults objects as it reads them from storage, so objects stored without %s read as %s from now on, with no write; ratcheting does not apply to defaults", p, raw(cur.Default))
	case cur.Default == nil:
		f.Change = fmt.Sprintf("default %s removed", raw(old.Default))
		f.Effect = fmt.Sprintf("manifests without %s, which created objects with %s, now create objects without it, and clients and controllers that relied on it see the field empty; ratcheting does not apply to defaults", p, raw(old.Default))
	default:
		f.Change = fmt.Sprintf("default changed from %s to %s", raw(old.Default), raw(cur.Default))
		f.Effect = fmt.Sprintf("manifests without %s, which created objects with %s, now create them with %s, while stored objects keep %s: the same manifest means another thing; ratcheting does not apply to defaults", p, raw(old.Default), raw(cur.Default), raw(old.Default))
	}
	c.add(f)
}

func (c *comparison) enum(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	switch {
	case len(cur.Enum) == 0:
	case len(old.Enum) == 0:
		c.add(Finding{
			Rule: EnumAdded, Path: p,
			Change: fmt.Sprintf("enum added (%s) to a field that took any value", values(cur.Enum)),
			Effect: ratcheted(p),
			Fix:    "list in the enum every value that stored objects may hold, " + newVersionFix,
		})
	default:
		var gone []apiextensionsv1.JSON
		for _, v := range old.Enum {
			if !slices.ContainsFunc(cur.Enum, func(w apiextensionsv1.JSON) bool { return sameJSON(&v, &w) }) {
				gone = append(gone, v)
			}
		}
		if len(gone) > 0 {
			c.add(Finding{
				Rule: EnumValueRemoved, Path: p,
				Change: fmt.Sprintf("enum value %s removed", values(gone)),
				Effect: ratcheted(p),
				Fix:    "keep the value in the enum (a validating webhook can refuse it in new objects), " + newVersionFix,
			})
		}
	}
}

// bound is one of the min or max keywords of a node.
type bound struct {
	keyword    string
	old, cur   *float64
	stricterIf func(old, cur float64) bool
}

func (c *comparison) bounds(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	higher := func(o, n float64) bool { return n > o }
	lower := func(o, n float64) bool { return n < o }
	mins := []bound{
		{"minimum", old.Minimum, cur.Minimum, higher},
		{"minLength", count(old.MinLength), count(cur.MinLength), higher},
		{"minItems", count(old.MinItems), count(cur.MinItems), higher},
		{"minProperties", count(old.MinProperties), count(cur.MinProperties), higher},
	}
	maxs := []bound{
		{"maximum", old.Maximum, cur.Maximum, lower},
		{"maxLength", count(old.MaxLength), count(cur.MaxLength), lower},
		{"maxItems", count(old.MaxItems), count(cur.MaxItems), lower},
		{"maxProperties", count(old.MaxProperties), count(cur.MaxProperties), lower},
	}
	if changes := tightened(mins, "raised", old.ExclusiveMinimum, cur.ExclusiveMinimum, "exclusiveMinimum"); len(changes) > 0 {
		c.add(Finding{Rule: MinimumRaised, Path: p, Change: strings.Join(changes, ", "), Effect: ratcheted(p), Fix: "keep the released bound, " + newVersionFix})
	}
	if changes := tightened(maxs, "lowered", old.ExclusiveMaximum, cur.ExclusiveMaximum, "exclusiveMaximum"); len(changes) > 0 {
		c.add(Finding{Rule: MaximumLowered, Path: p, Change: strings.Join(changes, ", "), Effect: ratcheted(p), Fix: "keep the released bound, " + newVersionFix})
	}
}

// tightened describes the bounds that are stricter than they were: added,
// or moved the way verb says; and an exclusive flag newly set on a bound
// that did not move.
func tightened(bounds []bound, verb string, oldExcl, curExcl bool, exclKeyword string) []string {
	var out []string
	for _, b := range bounds {
		switch {
		case b.cur == nil:
		case b.old == nil:
			out = append(out, fmt.Sprintf("%s %s added", b.keyword, num(*b.cur)))
		case b.stricterIf(*b.old, *b.cur):
			out = append(out, fmt.Sprintf("%s %s from %s to %s", b.keyword, verb, num(*b.old), num(*b.cur)))
		case *b.old == *b.cur && b.keyword == bounds[0].keyword && curExcl && !oldExcl:
			out = append(out, fmt.Sprintf("%s %s made exclusive (%s)", b.keyword, num(*b.cur), exclKeyword))
		}
	}
	return out
}

func count(n *int64) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (c *comparison) pattern(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if cur.Pattern == "" || cur.Pattern == old.Pattern {
		return
	}
	change := fmt.Sprintf("pattern %q added", cur.Pattern)
	if old.Pattern != "" {
		change = fmt.Sprintf("pattern changed from %q to %q (opgen cannot tell whether a regular expression is looser)", old.Pattern, cur.Pattern)
	}
	c.add(Finding{Rule: PatternChanged, Path: p, Change: change, Effect: ratcheted(p), Fix: "keep the released pattern, " + newVersionFix})
}

// rules reports every CEL rule whose expression the last release did not
// have: a new rule, or a changed one. A new message or reason changes
// nothing stored. A rule on the root that reads metadata.name is a name
// rule. Between served versions, transition rules are left out: they
// judge a change within one version.
func (c *comparison) rules(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	for _, r := range cur.XValidations {
		if slices.ContainsFunc(old.XValidations, func(o apiextensionsv1.ValidationRule) bool { return sameRule(o, r) }) {
			continue
		}
		if c.served && usesOldSelf(r.Rule) {
			continue
		}
		f := Finding{
			Rule: CELRuleAdded, Path: p,
			Change: fmt.Sprintf("new CEL rule %q", r.Rule),
			Effect: celEffect(p, r),
			Fix:    "write the rule so that every value stored objects may hold passes it, " + newVersionFix,
		}
		if len(p) == 0 && strings.Contains(r.Rule, "metadata.name") {
			f.Rule = NameRuleAdded
			f.Change = fmt.Sprintf("new rule on the object's name %q", r.Rule)
			f.Fix = "rename the objects that break it before the release, or keep the owned kinds (+opgen:controller:owns) that asked for a looser name"
		}
		c.add(f)
	}
}

// sameRule reports whether two rules judge the same: the same expression,
// run on creates alike.
func sameRule(a, b apiextensionsv1.ValidationRule) bool {
	optional := func(r apiextensionsv1.ValidationRule) bool { return r.OptionalOldSelf != nil && *r.OptionalOldSelf }
	return a.Rule == b.Rule && optional(a) == optional(b)
}

// celEffect says whether the API server ratchets rule: it ratchets a rule
// that does not use oldSelf (since Kubernetes 1.29; GA with validation
// ratcheting in 1.33), and never a transition rule, which uses oldSelf
// (apiextensions-apiserver, pkg/apiserver/schema/cel/validation.go).
func celEffect(p Path, r apiextensionsv1.ValidationRule) string {
	if len(p) == 0 {
		return "existing objects that break it can no longer be updated at all, not even to remove a finalizer, so their deletion hangs: the API server ratchets a rule only while the node it is on is left as it was, and every update (a label, a finalizer) changes the object's root, where this rule is; opgen release --live lists such objects"
	}
	if !usesOldSelf(r.Rule) {
		return ratcheted(p)
	}
	effect := fmt.Sprintf("existing objects may become unwritable: the API server never ratchets a rule that uses oldSelf, and runs it on every update of an object that has %s, unchanged or not", p)
	if r.OptionalOldSelf != nil && *r.OptionalOldSelf {
		effect += ", and, with optionalOldSelf, on every create too"
	}
	return effect
}

// usesOldSelf reports whether the CEL expression refers to oldSelf, as the
// API server decides which rules are transition rules. An expression that
// does not parse (the API server refuses it anyway) counts as one.
func usesOldSelf(rule string) bool {
	p, err := celparser.NewParser(celparser.Macros(celparser.AllMacros...))
	if err != nil {
		return true
	}
	tree, errs := p.Parse(celcommon.NewTextSource(rule))
	if len(errs.GetErrors()) > 0 {
		return true
	}
	found := false
	celast.PreOrderVisit(tree.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.IdentKind && e.AsIdent() == "oldSelf" {
			found = true
		}
	}))
	return found
}

// required reports the fields that are required and were not, unless the
// field has a default: the API server defaults an object read from
// storage before it validates an update, so a default satisfies the
// requirement.
func (c *comparison) required(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	parent := p.String()
	if len(p) == 0 {
		parent = "any field"
	}
	for _, name := range cur.Required {
		if slices.Contains(old.Required, name) {
			continue
		}
		if prop, ok := cur.Properties[name]; ok && prop.Default != nil {
			continue
		}
		if _, existed := old.Properties[name]; c.served && !existed {
			continue // the conversion from the other version fills it in
		}
		change := "a new required field"
		if _, existed := old.Properties[name]; existed {
			change = "an optional field became required"
		}
		c.add(Finding{
			Rule: RequiredAdded, Path: p.Child(name), Change: change,
			Effect: fmt.Sprintf("objects stored without it can no longer change %s: the API server ratchets a missing required field only while the whole of %s is unchanged", parent, p),
			Fix:    "make it optional (+optional or omitempty), give it a default (+kubebuilder:default), or require it in a new version whose conversion fills it in",
		})
	}
}

func (c *comparison) properties(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	names := make([]string, 0, len(old.Properties))
	for name := range old.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if len(p) == 0 && name == "metadata" {
			continue // the API server's, whatever the schema says
		}
		o := old.Properties[name]
		n, ok := cur.Properties[name]
		if !ok {
			if !c.served {
				c.fieldRemoved(p, name)
			}
			continue
		}
		c.node(p.Child(name), &o, &n)
	}
}

func (c *comparison) fieldRemoved(p Path, name string) {
	c.add(Finding{
		Rule: FieldRemoved, Path: p.Child(name), Name: name,
		Change: "the field is gone",
		Effect: "the API server prunes the fields a schema does not know from the objects it reads from storage, so the value stored objects hold is lost at their next write, and clients that still send it have it dropped",
		Fix:    "keep the field and stop using it (say so in its comment), " + newVersionFix + " (the conversion keeps the value in an annotation)",
	})
}

// sameJSON reports whether a and b hold the same JSON value (both nil
// included).
func sameJSON(a, b *apiextensionsv1.JSON) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a.Raw, &x) != nil || json.Unmarshal(b.Raw, &y) != nil {
		return string(a.Raw) == string(b.Raw)
	}
	return reflect.DeepEqual(x, y)
}

func raw(j *apiextensionsv1.JSON) string { return string(j.Raw) }

func values(list []apiextensionsv1.JSON) string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = raw(&list[i])
	}
	return strings.Join(out, ", ")
}
