package gen

// Hand-written conversions: what a project that converts by itself
// declares, and what a project that converts nothing loses.

import (
	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// ConversionStubFile is the spoke's file of hand-written conversions,
// which gen/conversion writes once with stubs.
const ConversionStubFile = "conversion.go"

// convertible reports whether c's kind converts itself the way
// controller-runtime's conversion package asks: the hub's type has a
// method Hub() and each spoke's type the methods ConvertTo and
// ConvertFrom, of one parameter each. The methods are found in the
// syntax, so the check needs no type information, nor a dependency on
// controller-runtime.
func convertible(c *Conversion) bool {
	if !hasMethod(c.Hub, "Hub", 0) {
		return false
	}
	for _, k := range c.Spokes {
		if !hasMethod(k, "ConvertTo", 1) || !hasMethod(k, "ConvertFrom", 1) {
			return false
		}
	}
	return true
}

// hasMethod reports whether k's type, or a pointer to it, declares a
// method called name with params parameters.
func hasMethod(k *Kind, name string, params int) bool {
	for _, f := range k.Version.Package.Syntax {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv != nil && fn.Name.Name == name && ReceiverName(fn) == k.Name && fn.Type.Params.NumFields() == params {
				return true
			}
		}
	}
	return false
}

// ReceiverName is the name of the type of a method's receiver (T or *T),
// or "" for a function.
func ReceiverName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// declaresConversion reports whether a spoke of c's kind holds conversion
// code of its own: a ConversionStubFile, or a function of
// code-generator's naming (Convert_<from>_<Type>_To_<to>_<Type>) outside
// the generated files.
func declaresConversion(ctx *Context, c *Conversion) bool {
	for _, k := range c.Spokes {
		v := k.Version
		if _, err := os.Stat(filepath.Join(v.Dir, ConversionStubFile)); err == nil {
			return true
		}
		for _, f := range v.Package.Syntax {
			if strings.HasPrefix(filepath.Base(ctx.Position(f.Package).Filename), "zz_generated") {
				continue
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Convert_") {
					return true
				}
			}
		}
	}
	return false
}

// warnNoConversion says, for a kind whose versions differ and which the
// project converts in no way, what controller-gen's CRD (which opgen then
// writes: no conversion, so the API server only rewrites apiVersion)
// loses, field by field.
func (b *apiBuilder) warnNoConversion(c *Conversion, schemas map[string]*apiextensionsv1.JSONSchemaProps) {
	hub := schemas[c.Hub.Version.Name]
	var lost []string
	for _, k := range c.Spokes {
		onlySpoke, onlyHub, changed, rules := schemaDiff(schemas[k.Version.Name], hub)
		v, h := k.Version.Name, c.Hub.Version.Name
		if len(onlySpoke) > 0 {
			lost = append(lost, "only "+v+" has "+strings.Join(onlySpoke, ", ")+" (lost when "+v+" objects are stored as "+h+")")
		}
		if len(onlyHub) > 0 {
			lost = append(lost, "only "+h+" has "+strings.Join(onlyHub, ", ")+" (dropped when an object is read or written as "+v+")")
		}
		if len(changed) > 0 {
			lost = append(lost, v+" and "+h+" disagree on the type of "+strings.Join(changed, ", ")+" (an object of one may fail the other's validation)")
		}
		if len(rules) > 0 {
			lost = append(lost, v+" and "+h+" validate "+strings.Join(rules, ", ")+" differently (nothing is lost, but an object of one may fail the other's validation)")
		}
	}
	b.ctx.Warnings.Add(c.Hub.Pos, "%s is served in %s with different schemas, and the project converts nothing between them (no Hub, ConvertTo and ConvertFrom methods, no Convert_ functions, no %s): as controller-gen does, opgen writes its CRD without a conversion, so the API server only rewrites apiVersion: %s. Write the conversion (docs/migrating.md, \"Hand-written conversions\"), or run opgen generate with --strict to have opgen generate it and stub what it cannot", c.Hub.Name, versionNames(append([]*Kind{c.Hub}, c.Spokes...)), ConversionStubFile, strings.Join(lost, "; "))
}

// schemaDiff compares two schemas: the property paths only a has, only b
// has, those whose type or format differs, and those whose validation
// (enum, bounds, pattern, default, rules) differs. Paths are in JSON, from
// the object's root (spec.schedule; "" for the root).
func schemaDiff(a, b *apiextensionsv1.JSONSchemaProps) (onlyA, onlyB, changed, rules []string) {
	var walk func(path string, a, b *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, a, b *apiextensionsv1.JSONSchemaProps) {
		if a == nil || b == nil {
			return
		}
		if a.Type != b.Type || a.Format != b.Format {
			changed = append(changed, pathName(path))
			return
		}
		if !equality.Semantic.DeepEqual(validation(a), validation(b)) {
			rules = append(rules, pathName(path))
		}
		for _, name := range propertyNames(a, b) {
			pa, inA := a.Properties[name]
			pb, inB := b.Properties[name]
			p := strings.TrimPrefix(path+"."+name, ".")
			switch {
			case !inB:
				onlyA = append(onlyA, p)
			case !inA:
				onlyB = append(onlyB, p)
			default:
				walk(p, &pa, &pb)
			}
		}
		if a.Items != nil && b.Items != nil {
			walk(path+"[]", a.Items.Schema, b.Items.Schema)
		}
		if a.AdditionalProperties != nil && b.AdditionalProperties != nil {
			walk(path+"[*]", a.AdditionalProperties.Schema, b.AdditionalProperties.Schema)
		}
	}
	walk("", a, b)
	return onlyA, onlyB, changed, rules
}

// validation is a schema without what schemaDiff compares on its own: its
// children, type, format and description.
func validation(s *apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	v := *s
	v.Properties, v.Items, v.AdditionalProperties = nil, nil, nil
	v.Type, v.Format, v.Description = "", "", ""
	return v
}

func pathName(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}

// propertyNames are the names of the properties of a and b, sorted, each
// once.
func propertyNames(a, b *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for n := range a.Properties {
		out = append(out, n)
	}
	for n := range b.Properties {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
