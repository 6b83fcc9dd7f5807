package k8stags

import (
	"fmt"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/gengo/v2/codetags"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
)

// constraint is what one tag says of a value: written into the value's
// schema as the kubebuilder marker it equals (apply), or as a CEL
// condition on an expression that names the value (cel), for a map's keys
// and a struct's subfields, which have no schema of their own to write to.
type constraint struct{ tag codetags.Tag }

// apply writes c into s, the schema of the value the tag is on.
func (c constraint) apply(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	t := c.tag
	switch t.Name {
	case "k8s:minimum", "k8s:maximum":
		return c.applyBound(ctx, s)
	case "k8s:minLength", "k8s:maxLength", "k8s:minItems", "k8s:maxItems", "k8s:minProperties", "k8s:maxProperties":
		return c.applyCount(ctx, s)
	case "k8s:format":
		return applyFormat(ctx, s, t.Value)
	case "k8s:maxBytes", "k8s:neq":
		cond, msg, _ := c.cel("self")
		return rule(ctx, s, cond, msg)
	case "k8s:eachVal":
		return c.applyEachVal(ctx, s)
	case "k8s:eachKey":
		if t.ValueTag == nil {
			return fmt.Errorf("+%s needs a tag to apply to each key: +k8s:eachKey=+k8s:maxLength=63", t.Name)
		}
		cond, msg, ok := constraint{*t.ValueTag}.cel("k")
		if !ok {
			return nil // Check warns
		}
		return rule(ctx, s, "self.all(k, "+cond+")", "each key "+msg)
	case "k8s:subfield":
		return c.applySubfield(ctx, s)
	case "k8s:update":
		return applyUpdate(ctx, s, t.Value)
	case "k8s:monotonic":
		return rule(ctx, s, "self >= oldSelf", "may not decrease")
	case "k8s:unique":
		return applyUnique(ctx, s, t.Value)
	}
	return nil // not a constraint on the value itself: Amend, controller-tools or Check
}

// applyBound writes minimum or maximum, keeping a stricter one that a
// kubebuilder marker wrote before.
func (c constraint) applyBound(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	v, err := strconv.ParseFloat(c.tag.Value, 64)
	if err != nil {
		return fmt.Errorf("+%s=%s: want a number, such as +%s=10", c.tag.Name, c.tag.Value, c.tag.Name)
	}
	if c.tag.Name == "k8s:minimum" {
		prev := s.Minimum
		if err := onRef(s, func() error { return crdmarkers.Minimum(v).ApplyToSchema(ctx, s) }, func() { s.Minimum = &v }); err != nil {
			return err
		}
		if prev != nil && *prev > *s.Minimum {
			s.Minimum = prev
		}
		return nil
	}
	prev := s.Maximum
	if err := onRef(s, func() error { return crdmarkers.Maximum(v).ApplyToSchema(ctx, s) }, func() { s.Maximum = &v }); err != nil {
		return err
	}
	if prev != nil && *prev < *s.Maximum {
		s.Maximum = prev
	}
	return nil
}

// applyCount writes a minimum or maximum length, item count or property
// count, keeping a stricter one that a kubebuilder marker wrote before.
func (c constraint) applyCount(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	n, err := strconv.ParseInt(c.tag.Value, 0, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("+%s=%s: want a non-negative integer, such as +%s=10", c.tag.Name, c.tag.Value, c.tag.Name)
	}
	var field **int64
	var marker interface {
		ApplyToSchema(*crdmarkers.SchemaContext, *apiextensionsv1.JSONSchemaProps) error
	}
	isMin := strings.HasPrefix(c.tag.Name, "k8s:min")
	switch c.tag.Name {
	case "k8s:minLength":
		field, marker = &s.MinLength, crdmarkers.MinLength(n)
	case "k8s:maxLength":
		field, marker = &s.MaxLength, crdmarkers.MaxLength(n)
	case "k8s:minItems":
		field, marker = &s.MinItems, crdmarkers.MinItems(n)
	case "k8s:maxItems":
		field, marker = &s.MaxItems, crdmarkers.MaxItems(n)
	case "k8s:minProperties":
		field, marker = &s.MinProperties, crdmarkers.MinProperties(n)
	default:
		field, marker = &s.MaxProperties, crdmarkers.MaxProperties(n)
	}
	prev := *field
	if err := onRef(s, func() error { return marker.ApplyToSchema(ctx, s) }, func() { *field = &n }); err != nil {
		return err
	}
	if prev != nil && ((isMin && *prev > **field) || (!isMin && *prev < **field)) {
		*field = prev
	}
	return nil
}

// onRef runs set on a schema that refers to a named type, whose type the
// marker cannot check yet (the CRD parser merges the two when it
// flattens the schema), and apply otherwise.
func onRef(s *apiextensionsv1.JSONSchemaProps, apply func() error, set func()) error {
	if s.Ref != nil && s.Type == "" {
		set()
		return nil
	}
	return apply()
}

// applyFormat writes a k8s- format as the CRD can check it; a format it
// cannot check writes nothing (Check warns).
func applyFormat(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps, name string) error {
	f, ok := formats[name]
	switch {
	case !ok:
		return nil
	case f.format != "":
		return crdmarkers.Format(f.format).ApplyToSchema(ctx, s)
	case f.pattern != "":
		return onRef(s, func() error { return crdmarkers.Pattern(f.pattern).ApplyToSchema(ctx, s) }, func() { s.Pattern = f.pattern })
	}
	return rule(ctx, s, fmt.Sprintf(f.rule, "self"), f.message)
}

// applyEachVal applies the payload to the items of a list or the values
// of a map.
func (c constraint) applyEachVal(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	if c.tag.ValueTag == nil {
		return fmt.Errorf("+%s needs a tag to apply to each value: +k8s:eachVal=+k8s:maxLength=63", c.tag.Name)
	}
	payload := constraint{*c.tag.ValueTag}
	switch {
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return payload.apply(ctx, s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return payload.apply(ctx, s.AdditionalProperties.Schema)
	}
	return fmt.Errorf("+%s applies to a list or a map, found %q: put it on the field of the list or map", c.tag.Name, s.Type)
}

// applySubfield writes the payload as a rule on the named field of the
// struct.
func (c constraint) applySubfield(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	arg, ok := c.tag.PositionalArg()
	if !ok || c.tag.ValueTag == nil {
		return fmt.Errorf("+%s needs a field name and a tag: +k8s:subfield(name)=+k8s:maxLength=63", c.tag.Name)
	}
	name, payload := arg.Value, *c.tag.ValueTag
	sub := "self." + name
	switch payload.Name {
	case "k8s:required":
		return rule(ctx, s, "has("+sub+")", name+" is required")
	case "k8s:forbidden":
		return rule(ctx, s, "!has("+sub+")", name+" is forbidden")
	}
	cond, msg, ok := constraint{payload}.cel(sub)
	if !ok {
		return nil // Check warns
	}
	return rule(ctx, s, "!has("+sub+") || "+cond, name+" "+msg)
}

// applyUpdate writes the transition rules of the field's own value;
// NoSet and NoUnset are the struct's (Amend).
func applyUpdate(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps, what string) error {
	switch what {
	case "NoModify":
		return rule(ctx, s, "self == oldSelf", "may not be modified")
	case "NoAddItem":
		return rule(ctx, s, "self.all(x, "+itemIn(s, "x", "oldSelf")+")", "items may not be added")
	case "NoRemoveItem":
		return rule(ctx, s, "oldSelf.all(x, "+itemIn(s, "x", "self")+")", "items may not be removed")
	case "NoSet", "NoUnset":
		return nil
	}
	return fmt.Errorf("+k8s:update=%s: want NoSet, NoUnset, NoModify, NoAddItem or NoRemoveItem", what)
}

// itemIn is the CEL condition that item x of a list or map with schema s
// is in the list or map named by in: by key for a map or a listType=map
// list, by value otherwise.
func itemIn(s *apiextensionsv1.JSONSchemaProps, x, in string) string {
	if keys := s.XListMapKeys; len(keys) > 0 {
		return in + ".exists(y, " + keysEqual(keys, "y", x) + ")"
	}
	return x + " in " + in
}

func keysEqual(keys []string, a, b string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, a+"."+k+" == "+b+"."+k)
	}
	return strings.Join(parts, " && ")
}

// applyUnique writes the uniqueness of a list's items: by value (set) or
// by its map keys (map).
func applyUnique(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps, what string) error {
	switch what {
	case "set":
		return rule(ctx, s, "self.all(x, self.exists_one(y, y == x))", "items must be unique")
	case "map":
		if len(s.XListMapKeys) == 0 {
			return fmt.Errorf("+k8s:unique=map needs the list's keys: add +k8s:listMapKey=<field> for each")
		}
		return rule(ctx, s, "self.all(x, self.exists_one(y, "+keysEqual(s.XListMapKeys, "y", "x")+"))", "items must have unique keys")
	}
	return fmt.Errorf("+k8s:unique=%s: want set or map", what)
}

// cel writes c as a CEL condition on the value x names, and the message
// of a rule that checks it; false when c cannot be written so (celWhy
// says why).
func (c constraint) cel(x string) (cond, msg string, ok bool) {
	t := c.tag
	switch t.Name {
	case "k8s:minimum", "k8s:maximum":
		op, word := ">=", "greater"
		if t.Name == "k8s:maximum" {
			op, word = "<=", "less"
		}
		return fmt.Sprintf("%s %s %s", x, op, t.Value), fmt.Sprintf("must be %s than or equal to %s", word, t.Value), true
	case "k8s:minLength", "k8s:maxLength", "k8s:minItems", "k8s:maxItems", "k8s:minProperties", "k8s:maxProperties":
		op, word := ">=", "at least"
		if strings.HasPrefix(t.Name, "k8s:max") {
			op, word = "<=", "at most"
		}
		unit := map[string]string{"Length": "characters", "Items": "items", "Properties": "properties"}[strings.TrimPrefix(strings.TrimPrefix(t.Name, "k8s:min"), "k8s:max")]
		return fmt.Sprintf("size(%s) %s %s", x, op, t.Value), fmt.Sprintf("must have %s %s %s", word, t.Value, unit), true
	case "k8s:maxBytes":
		return fmt.Sprintf("size(bytes(%s)) <= %s", x, t.Value), fmt.Sprintf("must be no more than %s bytes", t.Value), true
	case "k8s:neq":
		lit := t.Value
		if t.ValueType == codetags.ValueTypeString {
			lit = strconv.Quote(t.Value)
		}
		return x + " != " + lit, "may not be " + lit, true
	case "k8s:format":
		f, ok := formats[t.Value]
		switch {
		case !ok:
			return "", "", false
		case f.format == "k8s-short-name":
			return "!format.dns1123Label().validate(" + x + ").hasValue()", "must be a lowercase DNS label (k8s-short-name)", true
		case f.format == "k8s-long-name":
			return "!format.dns1123Subdomain().validate(" + x + ").hasValue()", "must be a lowercase DNS subdomain (k8s-long-name)", true
		case f.pattern != "":
			return x + ".matches('" + f.pattern + "')", "must be a lowercase UUID in 8-4-4-4-12 form", true
		}
		return fmt.Sprintf(f.rule, x), f.message, true
	}
	return "", "", false
}

// celWhy is the warning for a payload that cel cannot write.
func celWhy(t codetags.Tag) string {
	if t.Name == "k8s:format" {
		return unsupportedFormat(t.Value)
	}
	return "+" + t.Name + " cannot be checked on a map key or a subfield, which have no schema of their own in a CRD: write the rule with +kubebuilder:validation:XValidation"
}

// rule appends a CEL rule to s, as +kubebuilder:validation:XValidation
// does.
func rule(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps, cond, msg string) error {
	return crdmarkers.XValidation{Rule: cond, Message: msg}.ApplyToSchema(ctx, s)
}
