package k8stags

import (
	"fmt"
	"go/ast"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/gengo/v2/codetags"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Amend adds to the parser's schemas of the structs of pkgs the rules
// that their fields' tags ask of the struct: +k8s:forbidden,
// +k8s:dependentRequired and +k8s:dependentForbidden, +k8s:update=NoSet
// and NoUnset, and the unions (+k8s:unionMember, +k8s:unionDiscriminator,
// +k8s:zeroOrOneOfMember). Call it after parser.NeedPackage and before the
// parser builds CRDs, which copy the schemas. The rules come after the
// struct's own markers' rules: the field-order ones, then the at-most-one
// unions (as +kubebuilder:validation:AtMostOneOf), then the exactly-one
// unions (as +kubebuilder:validation:ExactlyOneOf).
func Amend(parser *ctcrd.Parser, pkgs []*loader.Package) {
	for _, pkg := range pkgs {
		_ = markers.EachType(parser.Collector, pkg, func(info *markers.TypeInfo) {
			rules := structRules(info)
			if len(rules) == 0 {
				return
			}
			id := ctcrd.TypeIdent{Package: pkg, Name: info.Name}
			parser.NeedSchemaFor(id)
			s, ok := parser.Schemata[id]
			if !ok {
				return
			}
			ctx := &crdmarkers.SchemaContext{Package: pkg, TypeInfo: info}
			for _, r := range rules {
				if err := rule(ctx, &s, r.Rule, r.Message); err != nil {
					pkg.AddError(loader.ErrFromNode(err, info.RawSpec))
				}
			}
			parser.Schemata[id] = s
		})
	}
}

// fieldTag is a tag on a field, with the field's JSON and Go names.
type fieldTag struct {
	json, goName string
	tag          codetags.Tag
}

// structRules are the rules of the struct info that its fields' tags ask
// for, in Amend's order.
func structRules(info *markers.TypeInfo) []apiextensionsv1.ValidationRule {
	var ordered, atMost, exactly []apiextensionsv1.ValidationRule
	unions := map[string]*union{}
	var names []string
	unionOf := func(name string) *union {
		if unions[name] == nil {
			unions[name] = &union{}
			names = append(names, name)
		}
		return unions[name]
	}
	for _, f := range fieldTags(info) {
		switch f.tag.Name {
		case "k8s:forbidden":
			ordered = append(ordered, vrule("!has(self."+f.json+")", f.json+" is forbidden"))
		case "k8s:dependentRequired", "k8s:dependentForbidden":
			if arg, ok := f.tag.PositionalArg(); ok {
				ordered = append(ordered, dependency(f, arg.Value))
			}
		case "k8s:update":
			switch f.tag.Value {
			case "NoSet":
				ordered = append(ordered, vrule("has(oldSelf."+f.json+") || !has(self."+f.json+")", f.json+" may not be set once the object exists"))
			case "NoUnset":
				ordered = append(ordered, vrule("!has(oldSelf."+f.json+") || has(self."+f.json+")", f.json+" may not be unset once set"))
			}
		case "k8s:unionDiscriminator":
			unionOf("k8s:unionMember/" + namedArg(f.tag, "union")).discriminator = f.json
		case "k8s:unionMember", "k8s:zeroOrOneOfMember":
			u := unionOf(f.tag.Name + "/" + namedArg(f.tag, "union"))
			member := f.goName
			if m, ok := f.tag.NamedArg("memberName"); ok {
				member = m.Value
			}
			u.members = append(u.members, unionMember{json: f.json, name: member})
		}
	}
	for _, name := range names {
		u := unions[name]
		switch {
		case len(u.members) == 0:
		case strings.HasPrefix(name, "k8s:zeroOrOneOfMember/"):
			atMost = append(atMost, u.atMostOne())
		case u.discriminator != "":
			ordered = append(ordered, u.discriminated()...)
		default:
			exactly = append(exactly, u.exactlyOne())
		}
	}
	return append(append(ordered, atMost...), exactly...)
}

func vrule(r, msg string) apiextensionsv1.ValidationRule {
	return apiextensionsv1.ValidationRule{Rule: r, Message: msg}
}

func dependency(f fieldTag, sibling string) apiextensionsv1.ValidationRule {
	if f.tag.Name == "k8s:dependentRequired" {
		return vrule("!has(self."+f.json+") || has(self."+sibling+")", sibling+" is required when "+f.json+" is set")
	}
	return vrule("!has(self."+f.json+") || !has(self."+sibling+")", sibling+" is forbidden when "+f.json+" is set")
}

func namedArg(t codetags.Tag, name string) string {
	a, _ := t.NamedArg(name)
	return a.Value
}

// union is one union of a struct's fields.
type union struct {
	discriminator string
	members       []unionMember
}

type unionMember struct{ json, name string }

func (u *union) jsonNames() []string {
	var out []string
	for _, m := range u.members {
		out = append(out, m.json)
	}
	return out
}

// atMostOne is the rule +kubebuilder:validation:AtMostOneOf gives.
func (u *union) atMostOne() apiextensionsv1.ValidationRule {
	names := u.jsonNames()
	return vrule(oneOfSum(names)+" <= 1", fmt.Sprintf("at most one of the fields in %v may be set", names))
}

// exactlyOne is the rule +kubebuilder:validation:ExactlyOneOf gives.
func (u *union) exactlyOne() apiextensionsv1.ValidationRule {
	names := u.jsonNames()
	return vrule(oneOfSum(names)+" == 1", fmt.Sprintf("exactly one of the fields in %v must be set", names))
}

// discriminated are the rules of a union with a discriminator: each member
// is set exactly when the discriminator holds its name.
func (u *union) discriminated() []apiextensionsv1.ValidationRule {
	var out []apiextensionsv1.ValidationRule
	d := u.discriminator
	for _, m := range u.members {
		out = append(out, vrule(
			fmt.Sprintf("has(self.%s) == (has(self.%s) && self.%s == %q)", m.json, d, d, m.name),
			fmt.Sprintf("%s must be set exactly when %s is %q", m.json, d, m.name)))
	}
	return out
}

// oneOfSum counts the fields set, as controller-tools' one-of markers do.
func oneOfSum(fields []string) string {
	var parts []string
	for _, f := range fields {
		parts = append(parts, "(has(self."+f+")?1:0)")
	}
	return strings.Join(parts, "+")
}

// fieldTags are the +k8s: tags in the doc comments of info's fields, in
// field order. Embedded fields have no name of their own: skipped.
func fieldTags(info *markers.TypeInfo) []fieldTag {
	var out []fieldTag
	for _, f := range info.Fields {
		json := jsonName(f.Tag)
		if json == "" || f.RawField == nil || f.RawField.Doc == nil {
			continue
		}
		for _, t := range tagsOf(f.RawField.Doc) {
			out = append(out, fieldTag{json: json, goName: f.Name, tag: t.tag})
		}
	}
	return out
}

func jsonName(tag reflect.StructTag) string {
	name, _, _ := strings.Cut(tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// line is a parsed tag and where its comment is.
type line struct {
	tag  codetags.Tag
	text string
	c    *ast.Comment
	err  error
}

// tagsOf parses the +k8s: lines of a comment group.
func tagsOf(doc *ast.CommentGroup) []line {
	var out []line
	for _, c := range doc.List {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if !strings.HasPrefix(text, Prefix) {
			continue
		}
		t, err := codetags.Parse(text[1:])
		out = append(out, line{tag: t, text: text, c: c, err: err})
	}
	return out
}
