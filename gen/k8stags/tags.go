package k8stags

import (
	"slices"
	"strings"
)

// Prefix starts every tag of validation-gen.
const Prefix = "+k8s:"

// Info is what opgen does with one tag of validation-gen.
type Info struct {
	// Tag is the tag's name without its +: k8s:minimum.
	Tag string
	// Schema is what the CRD gets, with the kubebuilder marker that gives
	// the same; "" when the tag is not read.
	Schema string
	// Why says why an unsupported tag is not read, and what to write
	// instead: the warning's text.
	Why string
}

// Supported reports whether the CRD gets something from the tag.
func (i Info) Supported() bool { return i.Schema != "" }

// Table lists every tag of validation-gen (k8s.io/code-generator
// v0.37, cmd/validation-gen/validators), in the order their rules are
// applied to a schema: a tag's position is its apply priority, so that
// the rules of one field come out in the same order on every run.
var Table = []Info{
	{Tag: "k8s:required", Schema: "the field is in the struct's `required`; a string, list or map also gets `minLength`/`minItems`/`minProperties` 1 (`+required`, as controller-tools reads it)"},
	{Tag: "k8s:optional", Schema: "the field is not in `required` (`+optional`, as controller-tools reads it)"},
	{Tag: "k8s:forbidden", Schema: "rule `!has(self.<field>)` on the struct (`+kubebuilder:validation:XValidation` on the type)"},
	{Tag: "k8s:minimum", Schema: "`minimum` (`+kubebuilder:validation:Minimum`)"},
	{Tag: "k8s:maximum", Schema: "`maximum` (`+kubebuilder:validation:Maximum`)"},
	{Tag: "k8s:minLength", Schema: "`minLength` (`+kubebuilder:validation:MinLength`)"},
	{Tag: "k8s:maxLength", Schema: "`maxLength` (`+kubebuilder:validation:MaxLength`)"},
	{Tag: "k8s:minItems", Schema: "`minItems` (`+kubebuilder:validation:MinItems`)"},
	{Tag: "k8s:maxItems", Schema: "`maxItems` (`+kubebuilder:validation:MaxItems`)"},
	{Tag: "k8s:minProperties", Schema: "`minProperties` (`+kubebuilder:validation:MinProperties`)"},
	{Tag: "k8s:maxProperties", Schema: "`maxProperties` (`+kubebuilder:validation:MaxProperties`)"},
	{Tag: "k8s:format", Schema: "k8s-short-name, k8s-long-name: `format` (`+kubebuilder:validation:Format`); k8s-uuid: `pattern` (`+kubebuilder:validation:Pattern`); k8s-label-key, k8s-prefixed-label-key, k8s-label-value, k8s-path-segment-name: a rule with CEL's `format` library or string functions (`+kubebuilder:validation:XValidation`); the other formats are warnings"},
	{Tag: "k8s:maxBytes", Schema: "rule `size(bytes(self)) <= N` (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:neq", Schema: "rule `self != <value>` (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:enum", Schema: "`enum` of the type's constants (`+kubebuilder:validation:Enum` on the type)"},
	{Tag: "k8s:enumExclude", Schema: "leaves the constant out of its type's `enum`"},
	{Tag: "k8s:listType", Schema: "`x-kubernetes-list-type` (`+listType`, as controller-tools reads it)"},
	{Tag: "k8s:listMapKey", Schema: "`x-kubernetes-list-map-keys` (`+listMapKey`, as controller-tools reads it)"},
	{Tag: "k8s:unique", Schema: "set: rule `self.all(x, self.exists_one(y, y == x))`; map: the same on the list's map keys (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:eachVal", Schema: "its payload on `items` of a list or `additionalProperties` of a map (`+kubebuilder:validation:items:<Marker>` for a list)"},
	{Tag: "k8s:eachKey", Schema: "rule `self.all(k, <payload on k>)` on the map (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:subfield", Schema: "rule `!has(self.<name>) || <payload on self.<name>>`, or `has(...)` for +k8s:required and `!has(...)` for +k8s:forbidden, on the field (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:immutable", Schema: "rule `self == oldSelf`, and `!has(oldSelf.<field>) || has(self.<field>)` on the struct of an optional field (as controller-tools reads it)"},
	{Tag: "k8s:update", Schema: "NoModify: rule `self == oldSelf`; NoSet and NoUnset: a transition rule on the struct; NoAddItem and NoRemoveItem: a transition rule on the list or map (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:monotonic", Schema: "rule `self >= oldSelf` (`+kubebuilder:validation:XValidation`)"},
	{Tag: "k8s:dependentRequired", Schema: "rule `!has(self.<field>) || has(self.<sibling>)` on the struct (`+kubebuilder:validation:XValidation` on the type)"},
	{Tag: "k8s:dependentForbidden", Schema: "rule `!has(self.<field>) || !has(self.<sibling>)` on the struct (`+kubebuilder:validation:XValidation` on the type)"},
	{Tag: "k8s:unionDiscriminator", Schema: "with its members, one rule per member on the struct: the member is set exactly when the discriminator names it (`+kubebuilder:validation:XValidation` on the type)"},
	{Tag: "k8s:zeroOrOneOfMember", Schema: "rule at most one member set, on the struct (`+kubebuilder:validation:AtMostOneOf` on the type)"},
	{Tag: "k8s:unionMember", Schema: "rule exactly one member set, on the struct (`+kubebuilder:validation:ExactlyOneOf` on the type); with a discriminator, see k8s:unionDiscriminator"},

	{Tag: "k8s:item", Why: "selects one item of a listType=map list by its key fields, with named arguments that controller-tools' marker names cannot hold: write +kubebuilder:validation:XValidation:rule=\"self.filter(x, x.<key> == '<value>').all(x, <rule>)\" on the list instead"},
	{Tag: "k8s:ifEnabled", Why: "enforces its payload only under an option (a feature gate) of the Kubernetes API server, and a CRD has no such options: write the payload tag alone to enforce it always, or remove the line"},
	{Tag: "k8s:ifDisabled", Why: "enforces its payload only without an option (a feature gate) of the Kubernetes API server, and a CRD has no such options: write the payload tag alone to enforce it always, or remove the line"},
	{Tag: "k8s:alpha", Why: "marks a validation of Kubernetes' own types that the API server checks only under a feature gate: write the payload tag alone to enforce it in the CRD, or remove the line"},
	{Tag: "k8s:beta", Why: "marks a validation of Kubernetes' own types that the API server checks only under a feature gate: write the payload tag alone to enforce it in the CRD, or remove the line"},
	{Tag: "k8s:customValidation", Why: "calls a hand-written Go function, which a CRD cannot run: write the rule with +kubebuilder:validation:XValidation, or check it in a validating webhook (+opgen:webhook:validate)"},
	{Tag: "k8s:customUnique", Why: "leaves a list's uniqueness to hand-written Go, which a CRD cannot run: write the rule with +kubebuilder:validation:XValidation, or remove the line"},
	{Tag: "k8s:opaqueType", Why: "tells validation-gen not to follow a type of another package; the CRD parser reads every type's markers, so it means nothing here: remove the line if validation-gen does not need it"},
	{Tag: "k8s:modeDiscriminator", Why: "state-based validation (with +k8s:ifMode) is not read yet: write each mode's rule with +kubebuilder:validation:XValidation on the struct"},
	{Tag: "k8s:ifMode", Why: "state-based validation (with +k8s:modeDiscriminator) is not read yet: write the rule with +kubebuilder:validation:XValidation:rule=\"self.<discriminator> != '<mode>' || <rule>\" on the struct"},
	{Tag: "k8s:validateTrue", Why: "a test tag of validation-gen with no validation: remove the line"},
	{Tag: "k8s:validateFalse", Why: "a test tag of validation-gen that always fails: remove the line"},
	{Tag: "k8s:validateError", Why: "a test tag of validation-gen that fails its generation: remove the line"},
	{Tag: "k8s:validateTrueAlpha", Why: "a test tag of validation-gen with no validation: remove the line"},
	{Tag: "k8s:validateTrueBeta", Why: "a test tag of validation-gen with no validation: remove the line"},
}

// Lookup returns the Table entry of a tag name (k8s:minimum), or false
// for a +k8s: tag that is not validation-gen's (deepcopy-gen,
// conversion-gen, openapi-gen...).
func Lookup(name string) (Info, bool) {
	i := slices.IndexFunc(Table, func(t Info) bool { return t.Tag == name })
	if i < 0 {
		return Info{}, false
	}
	return Table[i], true
}

// priority orders a tag's rules after the kubebuilder markers of the
// same value (so that Table's stricter-bound rule sees theirs) and by its
// place in Table.
func priority(name string) int {
	i := slices.IndexFunc(Table, func(t Info) bool { return t.Tag == name })
	return 100 + i
}

// formats are the k8s- formats a CRD can check, and how.
var formats = map[string]struct{ format, pattern, rule, message string }{
	"k8s-short-name":         {format: "k8s-short-name"},
	"k8s-long-name":          {format: "k8s-long-name"},
	"k8s-uuid":               {pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
	"k8s-label-key":          {rule: "!format.qualifiedName().validate(%s).hasValue()", message: "must be a label key: an optional DNS subdomain prefix and '/', and a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"},
	"k8s-prefixed-label-key": {rule: "%[1]s.contains('/') && !format.qualifiedName().validate(%[1]s).hasValue()", message: "must be a label key with a DNS subdomain prefix: <prefix>/<name>"},
	"k8s-label-value":        {rule: "!format.labelValue().validate(%s).hasValue()", message: "must be a label value: at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"},
	"k8s-path-segment-name":  {rule: "%[1]s != '.' && %[1]s != '..' && !%[1]s.contains('/') && !%[1]s.contains('%%')", message: "must be a path segment name: not '.' or '..', without '/' or '%'"},
}

// unsupportedFormat is the warning for a k8s- format a CRD cannot check.
func unsupportedFormat(f string) string {
	if strings.HasPrefix(f, "k8s-") {
		return "format " + f + " has no CRD equivalent (a CRD checks k8s-short-name, k8s-long-name, k8s-uuid, k8s-label-key, k8s-prefixed-label-key, k8s-label-value and k8s-path-segment-name): write the check with +kubebuilder:validation:Pattern or +kubebuilder:validation:XValidation"
	}
	return "format " + f + " is not one of validation-gen's k8s- formats: use +kubebuilder:validation:Format=" + f + " for an OpenAPI format"
}
