package compat

import (
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/opgen-sdk/opgen/gen"
)

// site is where a finding is reported and where a marker may acknowledge
// it: the Go field or type the schema node comes from.
type site struct {
	pos token.Position
	// owners are the names (fields, types) whose doc comments may hold
	// the marker.
	owners []token.Position
	// where tells the user where to put the marker.
	where string
}

// locator maps schema paths of a kind's versions to the Go declarations
// they come from.
type locator struct {
	ctx *gen.Context
}

// kind returns the Go kind of group and kind in version, or, when that
// version has none, in the storage version, or any.
func (l *locator) kind(group, kind, version, storage string) *model.Kind {
	var found *model.Kind
	for _, k := range l.ctx.API.Kinds() {
		if k.Version.Group.Name != group || k.Name != kind {
			continue
		}
		switch {
		case k.Version.Name == version:
			return k
		case k.Version.Name == storage || found == nil:
			found = k
		}
	}
	return found
}

// kindSite is the kind's type in every version: where a change of the
// whole CRD or of its versions is reported (at the type in k's version)
// and acknowledged (at any of them).
func (l *locator) kindSite(k *model.Kind) site {
	s := site{pos: k.Pos, where: "above type " + k.Name + " (in any version)"}
	for _, other := range l.ctx.API.Kinds() {
		if other.Name == k.Name && other.Version.Group == k.Version.Group {
			s.owners = append(s.owners, other.Pos)
		}
	}
	return s
}

// walk follows p from the kind's type through the Go types, as the CRD
// generator went down the JSON names of the fields (embedded and inline
// fields included), as far as the types of the project's module go.
type walk struct {
	// field is the last field reached inside the module, nil at the root.
	field *types.Var
	// named is the named type of the node reached, when p was followed to
	// its end and the type is the module's.
	named *types.TypeName
}

func (l *locator) walk(k *model.Kind, p Path) walk {
	pkg := k.Version.Package
	l.ctx.Checker.Check(pkg)
	var w walk
	if pkg.Types == nil {
		return w
	}
	obj, _ := pkg.Types.Scope().Lookup(k.Name).(*types.TypeName)
	if obj == nil {
		return w
	}
	w.named = obj
	t := obj.Type()
	for _, step := range p {
		w.named = nil
		next := stepInto(t, step)
		if next == nil {
			return w
		}
		if f, ok := next.(*types.Var); ok {
			if !l.inModule(f.Pos()) {
				return w
			}
			w.field = f
			t = f.Type()
		} else {
			t = next.(types.Type)
		}
		if n, ok := deref(t).(*types.Named); ok && l.inModule(n.Obj().Pos()) {
			w.named = n.Obj()
		}
	}
	return w
}

// stepInto returns the field (*types.Var) of t that step names, or the
// element type of an Items or Values step; nil when t has none.
func stepInto(t types.Type, step Step) any {
	u := deref(t).Underlying()
	switch {
	case step.Items:
		switch s := u.(type) {
		case *types.Slice:
			return s.Elem()
		case *types.Array:
			return s.Elem()
		}
	case step.Values:
		if m, ok := u.(*types.Map); ok {
			return m.Elem()
		}
	default:
		if st, ok := u.(*types.Struct); ok {
			if f := fieldByJSON(st, step.Name); f != nil {
				return f
			}
		}
	}
	return nil
}

// fieldByJSON returns the field of st whose JSON name is name, looking
// into embedded and inline fields as encoding/json does.
func fieldByJSON(st *types.Struct, name string) *types.Var {
	for i := 0; i < st.NumFields(); i++ {
		f := st.Field(i)
		tag := reflect.StructTag(st.Tag(i)).Get("json")
		jsonName, opts, _ := strings.Cut(tag, ",")
		if jsonName == "-" && opts == "" {
			continue
		}
		if jsonName == "" && (f.Embedded() || strings.Contains(","+opts+",", ",inline,")) {
			if inner, ok := deref(f.Type()).Underlying().(*types.Struct); ok {
				if found := fieldByJSON(inner, name); found != nil {
					return found
				}
			}
			continue
		}
		if jsonName == "" {
			jsonName = f.Name()
		}
		if jsonName == name {
			return f
		}
	}
	return nil
}

func deref(t types.Type) types.Type {
	for {
		p, ok := t.(*types.Pointer)
		if !ok {
			return t
		}
		t = p.Elem()
	}
}

func (l *locator) inModule(pos token.Pos) bool {
	if !pos.IsValid() {
		return false
	}
	file := l.ctx.Fset.Position(pos).Filename
	return strings.HasPrefix(file, l.ctx.Project.ModuleDir+string(filepath.Separator))
}

// fieldSite is where a finding at p, a node that exists in the Go types,
// is reported: the field it comes from, or the kind's type for the root.
// A marker may acknowledge it there or on the node's type.
func (l *locator) fieldSite(k *model.Kind, p Path) site {
	w := l.walk(k, p)
	var s site
	switch {
	case w.field != nil:
		s.pos = l.ctx.Fset.Position(w.field.Pos())
		s.owners = append(s.owners, s.pos)
		s.where = "above the field " + w.field.Name()
	default:
		s.pos = k.Pos
		s.owners = append(s.owners, k.Pos)
		s.where = "above type " + k.Name
	}
	if w.named != nil {
		s.owners = append(s.owners, l.ctx.Fset.Position(w.named.Pos()))
		if w.field != nil {
			s.where += " or above type " + w.named.Name()
		}
	}
	return s
}

// removedSite is where the removal of the field at p is reported: the type
// that held it, where the marker names the field; or the field of that
// type, or the kind's type at the root.
func (l *locator) removedSite(k *model.Kind, p Path) site {
	parent := p[:len(p)-1]
	w := l.walk(k, parent)
	var s site
	if w.named != nil {
		s.pos = l.ctx.Fset.Position(w.named.Pos())
		s.owners = append(s.owners, s.pos)
		s.where = "above type " + w.named.Name()
	}
	if w.field != nil {
		fpos := l.ctx.Fset.Position(w.field.Pos())
		s.owners = append(s.owners, fpos)
		if s.where == "" {
			s.pos, s.where = fpos, "above the field "+w.field.Name()
		}
	}
	if s.where == "" {
		s.pos, s.where = k.Pos, "above type "+k.Name
		s.owners = append(s.owners, k.Pos)
	}
	return s
}
