package model

import (
	"fmt"
	"go/ast"
	"reflect"
	"strconv"
	"strings"
)

// Projection is what a controller's cache keeps of a struct
// (+opgen:controller:cacheSpec): the named fields, each whole or, when a
// longer path names one of its own fields, projected in turn.
type Projection struct {
	// Pkg and Type name the struct's Go type.
	Pkg, Type string
	// Fields are the fields kept, in the struct's order.
	Fields []ProjectedField
}

// ProjectedField is a field a Projection keeps.
type ProjectedField struct {
	// Name is the field's Go name.
	Name string
	// Sub, when set, keeps only some of the field's own fields; nil keeps
	// it whole.
	Sub *Projection
}

// settleProjections resolves the +opgen:controller:cacheSpec paths of each
// controller against its kind's spec type: each must name a field of spec
// by its JSON name, through structs declared in the kind's package.
func (b *apiBuilder) settleProjections(api *API) {
	var decls map[typeKey]typeDecl
	for _, k := range api.Controllers() {
		if len(k.Controller.CacheSpec) == 0 {
			continue
		}
		if decls == nil {
			decls = typeDecls(b.in.Roots)
		}
		pos, _ := b.docMarker(k.Pos, IsMarker("+opgen:controller:cacheSpec"))
		var paths [][]string
		for _, p := range k.Controller.CacheSpec {
			paths = append(paths, append([]string{"spec"}, strings.Split(p, ".")...))
		}
		p, err := project(decls, k.Version.ImportPath, k.Name, paths)
		if err != nil {
			b.in.Errors.Add(pos, "%s has +opgen:controller:cacheSpec=%s, but %v", k.Name, strings.Join(k.Controller.CacheSpec, ";"), err)
			continue
		}
		k.Projection = p
	}
}

// project returns the projection of the struct type name of package pkg
// that keeps paths (JSON names).
func project(decls map[typeKey]typeDecl, pkg, name string, paths [][]string) (*Projection, error) {
	st := structOf(decls, pkg, name)
	if st == nil {
		return nil, fmt.Errorf("%s is not a struct declared in %s: cacheSpec works on a spec of a struct type of the kind's package", name, pkg)
	}
	out := &Projection{Pkg: pkg, Type: name}
	byField := map[string][][]string{}
	for _, p := range paths {
		byField[p[0]] = append(byField[p[0]], p[1:])
	}
	found, embeds := map[string]bool{}, false
	for _, f := range st.Fields.List {
		json, inline := jsonOf(f)
		if inline {
			embeds = true
			continue
		}
		tails, named := byField[json]
		if !named || len(f.Names) != 1 {
			continue
		}
		found[json] = true
		kept := ProjectedField{Name: f.Names[0].Name}
		if whole := containsEmpty(tails); !whole {
			id, ok := f.Type.(*ast.Ident)
			if !ok || structOf(decls, pkg, id.Name) == nil {
				return nil, fmt.Errorf("%s.%s is not a struct of the kind's package (a pointer, slice, map or type of another package): name %s whole, or drop the marker if it is spec", name, json, json)
			}
			sub, err := project(decls, pkg, id.Name, tails)
			if err != nil {
				return nil, err
			}
			kept.Sub = sub
		}
		out.Fields = append(out.Fields, kept)
	}
	for _, p := range paths {
		switch {
		case found[p[0]]:
		case embeds:
			return nil, fmt.Errorf("%s declares no field with the JSON name %q, and the fields of the structs it embeds inline cannot be named yet: name fields %s declares itself, or drop the marker", name, p[0], name)
		default:
			return nil, fmt.Errorf("%s has no field with the JSON name %q", name, p[0])
		}
	}
	return out, nil
}

// structOf returns the struct type name of package pkg declares, or nil.
func structOf(decls map[typeKey]typeDecl, pkg, name string) *ast.StructType {
	if d, ok := decls[typeKey{pkg, name}]; ok {
		st, _ := d.spec.Type.(*ast.StructType)
		return st
	}
	return nil
}

// jsonOf returns the JSON name of a struct field (its Go name without a
// tag) and whether it is embedded inline.
func jsonOf(f *ast.Field) (name string, inline bool) {
	var tag string
	if f.Tag != nil {
		if t, err := strconv.Unquote(f.Tag.Value); err == nil {
			tag = reflect.StructTag(t).Get("json")
		}
	}
	name, opts, _ := strings.Cut(tag, ",")
	if len(f.Names) == 0 {
		return name, name == "" || strings.Contains(","+opts+",", ",inline,")
	}
	if name == "" {
		name = f.Names[0].Name
	}
	return name, false
}

func containsEmpty(paths [][]string) bool {
	for _, p := range paths {
		if len(p) == 0 {
			return true
		}
	}
	return false
}
