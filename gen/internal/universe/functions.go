package universe

import (
	"fmt"
	"go/ast"
	gotypes "go/types"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

// AddFunctions adds the package-level functions of p whose names have
// prefix, with their signatures read from p's syntax rather than from
// go/types. The run's type checker fills only what type declarations
// reference, so a signature that names a package no type refers to (such
// as conversion.Scope) has no valid go/types type; its syntax names it
// all the same. The signatures get the names and kinds gengo gives them:
// a parameter type the universe holds is that type. A signature with a
// type that syntax alone cannot name (a func, chan, struct or generic
// type) is an error.
func (b *Builder) AddFunctions(p *loader.Package, prefix string) error {
	p.NeedSyntax()
	b.indexComments(p)
	pkg := b.u.Package(p.PkgPath)
	pkg.Path = p.PkgPath
	if pkg.Name == "" {
		pkg.Name = p.Name
	}
	if pkg.Dir == "" && len(p.GoFiles) > 0 {
		pkg.Dir = filepath.Dir(p.GoFiles[0])
	}
	local := TypeNames(p)
	for _, f := range p.Syntax {
		r := &resolver{b: b, pkg: p, local: local, imports: fileImports(f, p)}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Type.TypeParams != nil || !strings.HasPrefix(fn.Name.Name, prefix) {
				continue
			}
			sig, err := r.signature(fn.Type)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", b.fset.Position(fn.Pos()), fn.Name.Name, err)
			}
			t := b.u.Function(types.Name{Package: p.PkgPath, Name: fn.Name.Name})
			t.Kind = types.DeclarationOf
			t.Underlying = &types.Type{Name: types.Name{Name: "func"}, Kind: types.Func, Signature: sig}
			t.CommentLines = b.docComment(fn.Name.Pos())
		}
	}
	return nil
}

// TypeNames returns the names of the types p declares, from its syntax.
func TypeNames(p *loader.Package) map[string]bool {
	p.NeedSyntax()
	out := map[string]bool{}
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok {
				for _, s := range gd.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						out[ts.Name.Name] = true
					}
				}
			}
		}
	}
	return out
}

// fileImports maps the names a file gives its imports to their paths.
func fileImports(f *ast.File, p *loader.Package) map[string]string {
	out := map[string]string{}
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := ""
		switch {
		case spec.Name != nil:
			name = spec.Name.Name
		case p.Imports()[path] != nil:
			name = p.Imports()[path].Name
		default:
			name = filepath.Base(path)
		}
		out[name] = path
	}
	return out
}

// resolver turns the type expressions of one file into universe types.
type resolver struct {
	b   *Builder
	pkg *loader.Package
	// local are the type names the package declares; imports maps the
	// file's names of its imports to their paths.
	local   map[string]bool
	imports map[string]string
}

func (r *resolver) signature(ft *ast.FuncType) (*types.Signature, error) {
	sig := &types.Signature{}
	var err error
	if sig.Parameters, err = r.fields(ft.Params); err != nil {
		return nil, err
	}
	if n := len(ft.Params.List); n > 0 {
		_, sig.Variadic = ft.Params.List[n-1].Type.(*ast.Ellipsis)
	}
	if ft.Results != nil {
		if sig.Results, err = r.fields(ft.Results); err != nil {
			return nil, err
		}
	}
	return sig, nil
}

func (r *resolver) fields(list *ast.FieldList) ([]*types.ParamResult, error) {
	var out []*types.ParamResult
	for _, f := range list.List {
		t, _, err := r.typ(f.Type)
		if err != nil {
			return nil, err
		}
		if len(f.Names) == 0 {
			out = append(out, &types.ParamResult{Type: t})
		}
		for _, n := range f.Names {
			out = append(out, &types.ParamResult{Name: n.Name, Type: t})
		}
	}
	return out, nil
}

// typ returns the universe type of e and its go/types string, from which
// gengo names it.
func (r *resolver) typ(e ast.Expr) (*types.Type, string, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return r.typ(e.X)
	case *ast.Ident:
		return r.ident(e.Name)
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		path := r.imports[identName(x, ok)]
		if path == "" {
			return nil, "", fmt.Errorf("unknown package in %s", gotypes.ExprString(e))
		}
		return r.named(path, e.Sel.Name)
	case *ast.StarExpr:
		elem, s, err := r.typ(e.X)
		return r.composite("*"+s, types.Pointer, err, func(t *types.Type) { t.Elem = elem })
	case *ast.Ellipsis:
		elem, s, err := r.typ(e.Elt)
		return r.composite("[]"+s, types.Slice, err, func(t *types.Type) { t.Elem = elem })
	case *ast.ArrayType:
		elem, s, err := r.typ(e.Elt)
		if e.Len == nil {
			return r.composite("[]"+s, types.Slice, err, func(t *types.Type) { t.Elem = elem })
		}
		lit, ok := e.Len.(*ast.BasicLit)
		n, convErr := strconv.ParseInt(litValue(lit, ok), 0, 64)
		if convErr != nil {
			return nil, "", fmt.Errorf("array length %s is not a literal", gotypes.ExprString(e.Len))
		}
		return r.composite(fmt.Sprintf("[%d]%s", n, s), types.Array, err, func(t *types.Type) { t.Elem, t.Len = elem, n })
	case *ast.MapType:
		key, ks, err := r.typ(e.Key)
		if err != nil {
			return nil, "", err
		}
		elem, es, err := r.typ(e.Value)
		return r.composite("map["+ks+"]"+es, types.Map, err, func(t *types.Type) { t.Key, t.Elem = key, elem })
	case *ast.InterfaceType:
		if e.Methods == nil || len(e.Methods.List) == 0 {
			empty := gotypes.NewInterfaceType(nil, nil)
			return r.b.walk(nil, empty), empty.String(), nil
		}
	}
	return nil, "", fmt.Errorf("type %s cannot be named from syntax", gotypes.ExprString(e))
}

// ident resolves a name: a type of the package, or a predeclared one.
func (r *resolver) ident(name string) (*types.Type, string, error) {
	if r.local[name] {
		return r.named(r.pkg.PkgPath, name)
	}
	obj, ok := gotypes.Universe.Lookup(name).(*gotypes.TypeName)
	if !ok {
		return nil, "", fmt.Errorf("unknown type %s", name)
	}
	t := obj.Type()
	return r.b.walk(nil, t), gotypes.Unalias(t).String(), nil
}

// named returns the named type path.name, which the universe holds
// already when a walked type refers to it.
func (r *resolver) named(path, name string) (*types.Type, string, error) {
	return r.b.u.Type(types.Name{Package: path, Name: name}), path + "." + name, nil
}

// composite returns the unnamed type gengo names s, filling it with kind
// and fill unless a walk already did.
func (r *resolver) composite(s string, kind types.Kind, err error, fill func(*types.Type)) (*types.Type, string, error) {
	if err != nil {
		return nil, "", err
	}
	t := r.b.u.Type(typeName(s))
	if t.Kind == types.Unknown {
		t.Kind = kind
		fill(t)
	}
	return t, s, nil
}

func identName(id *ast.Ident, ok bool) string {
	if !ok {
		return ""
	}
	return id.Name
}

func litValue(lit *ast.BasicLit, ok bool) string {
	if !ok {
		return ""
	}
	return lit.Value
}
