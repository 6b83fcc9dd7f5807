package compat

import (
	"fmt"
	"sort"
	"strings"
)

// Rule names one kind of change that breaks objects of the last release.
// The +opgen:compat:allow marker names the rule it acknowledges.
type Rule string

// The rules, each with a failing and an acknowledged fixture under
// testdata.
const (
	// ScopeChanged: the kind moved between Namespaced and Cluster.
	ScopeChanged Rule = "scope-changed"
	// VersionRemoved: a version the last release served, or stored in, is
	// gone.
	VersionRemoved Rule = "version-removed"
	// FieldRemoved: a field of a released version is gone.
	FieldRemoved Rule = "field-removed"
	// TypeChanged: a field's type (or a string's format, or a narrower
	// integer or number) changed.
	TypeChanged Rule = "type-changed"
	// RequiredAdded: a field is required that was not.
	RequiredAdded Rule = "required-added"
	// DefaultChanged: a default was added, changed or removed.
	DefaultChanged Rule = "default-changed"
	// EnumAdded: a field that took any value takes only an enum's.
	EnumAdded Rule = "enum-added"
	// EnumValueRemoved: an enum lost a value.
	EnumValueRemoved Rule = "enum-value-removed"
	// MinimumRaised: minimum, minLength, minItems or minProperties was
	// added or raised, or the minimum became exclusive.
	MinimumRaised Rule = "minimum-raised"
	// MaximumLowered: maximum, maxLength, maxItems or maxProperties was
	// added or lowered, or the maximum became exclusive.
	MaximumLowered Rule = "maximum-lowered"
	// PatternChanged: a pattern was added or changed.
	PatternChanged Rule = "pattern-changed"
	// CELRuleAdded: a CEL rule (x-kubernetes-validations) was added or
	// its expression changed.
	CELRuleAdded Rule = "cel-rule-added"
	// NameRuleAdded: a CEL rule on the object's root that reads
	// metadata.name (the rule of +opgen:controller:namesOwned) was
	// added or changed.
	NameRuleAdded Rule = "name-rule-added"
	// ListTypeChanged: x-kubernetes-list-type changed (unset and atomic
	// are the same).
	ListTypeChanged Rule = "list-type-changed"
	// ListMapKeysChanged: the x-kubernetes-list-map-keys of a map list
	// changed.
	ListMapKeysChanged Rule = "list-map-keys-changed"
	// NullableRemoved: a field that took null no longer does.
	NullableRemoved Rule = "nullable-removed"
	// PreserveUnknownFieldsRemoved: x-kubernetes-preserve-unknown-fields
	// is no longer set on a node that had it.
	PreserveUnknownFieldsRemoved Rule = "preserve-unknown-fields-removed"
	// AdditionalPropertiesRemoved: a map (additionalProperties) no longer
	// takes any key.
	AdditionalPropertiesRemoved Rule = "additional-properties-removed"
	// CompositionChanged: anyOf, oneOf, allOf or not was added or
	// changed.
	CompositionChanged Rule = "composition-changed"
	// DescriptionChanged: a description changed. Off by default: it
	// breaks nothing stored or served.
	DescriptionChanged Rule = "description-changed"
	// ServedVersionStricter: of two versions served together, one
	// refuses a value the other takes, and the last release did not.
	ServedVersionStricter Rule = "served-version-stricter"
	// UnknownChange: a change of a schema keyword, or of a version,
	// that no other rule knows. The gate fails closed on it.
	UnknownChange Rule = "unknown-change"
)

// Rules are every rule, in the order docs/upgrading.md lists them.
var Rules = []Rule{
	ScopeChanged, VersionRemoved, FieldRemoved, TypeChanged, RequiredAdded, DefaultChanged,
	EnumAdded, EnumValueRemoved, MinimumRaised, MaximumLowered, PatternChanged, CELRuleAdded,
	NameRuleAdded, ListTypeChanged, ListMapKeysChanged, NullableRemoved, PreserveUnknownFieldsRemoved,
	AdditionalPropertiesRemoved, CompositionChanged, DescriptionChanged, ServedVersionStricter, UnknownChange,
}

func knownRule(name string) bool {
	for _, r := range Rules {
		if string(r) == name {
			return true
		}
	}
	return false
}

func ruleNames() string {
	names := make([]string, len(Rules))
	for i, r := range Rules {
		names[i] = string(r)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Finding is one change that breaks objects of the last release.
type Finding struct {
	Rule Rule
	// Kind and Version say where: Version is the version compared, or
	// the version removed; empty for a change of the whole CRD.
	Kind, Version string
	// Path is where in the version's schema; nil for a change of the
	// whole CRD or version.
	Path Path
	// Name is what the marker acknowledging a removal names: the removed
	// field's JSON name (field-removed) or the removed version.
	Name string
	// Change says what changed; Effect what it does to the objects of
	// the last release, ratcheting included; Fix what to do instead.
	Change, Effect, Fix string
}

// Subject is what the finding is about, as messages start: the kind, the
// version and the field.
func (f Finding) Subject() string {
	s := f.Kind
	if f.Version != "" && f.Rule != VersionRemoved {
		s += " " + f.Version
	}
	if len(f.Path) > 0 {
		s += " " + f.Path.String()
	}
	return s
}

// Step is one step of a Path into a schema.
type Step struct {
	// Name is the property's name; empty for Items and Values.
	Name string
	// Items steps into the elements of an array, Values into the values
	// of a map (additionalProperties).
	Items, Values bool
}

// Path is where a schema node is, from the object's root.
type Path []Step

// Child returns the path of property name under p.
func (p Path) Child(name string) Path { return append(p[:len(p):len(p)], Step{Name: name}) }

func (p Path) items() Path  { return append(p[:len(p):len(p)], Step{Items: true}) }
func (p Path) values() Path { return append(p[:len(p):len(p)], Step{Values: true}) }

// String writes p as kubectl explains fields: spec.tags[*], spec.labels[*]
// for a map's values; the root is "the object".
func (p Path) String() string {
	if len(p) == 0 {
		return "the object"
	}
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.Items, s.Values:
			b.WriteString("[*]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		}
	}
	return b.String()
}

// ratcheted is the effect of a check the API server ratchets: CRD
// validation ratcheting (KEP-4008; beta and on by default since
// Kubernetes 1.30, GA in 1.33) turns the errors of an update on a value
// the update left as it was into warnings (apiextensions-apiserver,
// pkg/apiserver/validation/ratcheting.go).
func ratcheted(p Path) string {
	return fmt.Sprintf("existing objects stay writable, since the API server ratchets this check (CRD validation ratcheting, GA in Kubernetes 1.33): an update that leaves %s as it was passes, but new objects, and updates that change %s, must pass it", p, p)
}

const newVersionFix = "or make the change in a new version (opgen create api --version ...) and convert between them"
