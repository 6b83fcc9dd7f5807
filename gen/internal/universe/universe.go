// Package universe builds gengo's model of Go packages (a types.Universe)
// from the packages a run already loaded and type-checked with
// controller-tools' loader, so that code-generator's generators need no
// load of their own.
package universe

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	gotypes "go/types"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

// Builder walks the go/types objects of loaded packages the way gengo's
// parser does (k8s.io/gengo/v2/parser): the same names, kinds, members,
// methods, tags and comment lines, so that the generators produce what
// they produce after their own parse. The golden and fixture tests hold
// the two to byte-identical output.
type Builder struct {
	fset *token.FileSet
	u    types.Universe
	// endLine maps the last line of every comment group of the walked
	// packages' files to the group, as gengo looks comments up.
	endLine map[fileLine]*ast.CommentGroup
}

type fileLine struct {
	file string
	line int
}

// New returns the universe of pkgs and their dependencies. pkgs must be
// type-checked.
func New(fset *token.FileSet, pkgs []*loader.Package) (types.Universe, error) {
	b, err := NewBuilder(fset, pkgs)
	if err != nil {
		return nil, err
	}
	return b.Universe(), nil
}

// NewBuilder returns a builder whose universe holds pkgs and their
// dependencies. pkgs must be type-checked.
func NewBuilder(fset *token.FileSet, pkgs []*loader.Package) (*Builder, error) {
	b := &Builder{fset: fset, u: types.Universe{}, endLine: map[fileLine]*ast.CommentGroup{}}
	requested := map[string]bool{}
	for _, p := range pkgs {
		requested[p.PkgPath] = true
	}
	seen := map[*loader.Package]bool{}
	var all []*loader.Package
	var visit func(p *loader.Package)
	visit = func(p *loader.Package) {
		if seen[p] {
			return
		}
		seen[p] = true
		all = append(all, p)
		for _, path := range sortedImports(p) {
			visit(p.Imports()[path])
		}
	}
	for _, p := range pkgs {
		visit(p)
	}
	for _, p := range all {
		b.indexComments(p)
	}
	for _, p := range all {
		pkg := b.u.Package(p.PkgPath)
		pkg.Path = p.PkgPath
		if len(p.GoFiles) > 0 {
			pkg.Dir = filepath.Dir(p.GoFiles[0])
		}
		if requested[p.PkgPath] {
			if err := b.addPackage(p, pkg); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// Assemble renders a file of a gengo generator as gengo's Go file type
// does, unformatted (gofmt is the caller's).
func Assemble(f *generator.File) ([]byte, error) {
	var b bytes.Buffer
	et := generator.NewErrorTracker(&b)
	generator.NewGoFile().Assemble(et, f)
	return b.Bytes(), et.Error()
}

// Universe returns the universe built.
func (b *Builder) Universe() types.Universe { return b.u }

func sortedImports(p *loader.Package) []string {
	paths := make([]string, 0, len(p.Imports()))
	for path := range p.Imports() {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	return paths
}

func (b *Builder) indexComments(p *loader.Package) {
	for _, f := range p.Syntax {
		for _, c := range f.Comments {
			pos := b.fset.Position(c.End())
			b.endLine[fileLine{pos.Filename, pos.Line}] = c
		}
	}
}

// addPackage adds everything a requested package declares, its comments
// (from doc.go, as gengo reads them) and its imports.
func (b *Builder) addPackage(p *loader.Package, pkg *types.Package) error {
	if p.Types == nil || p.TypesInfo == nil {
		return fmt.Errorf("package %s is not type-checked", p.PkgPath)
	}
	pkg.Name = p.Name
	b.addPackageComments(p, pkg)
	scope := p.Types.Scope()
	for _, name := range scope.Names() {
		switch obj := scope.Lookup(name).(type) {
		case *gotypes.TypeName:
			t := b.walk(nil, obj.Type())
			b.addComments(obj, t)
		case *gotypes.Func:
			if sig, ok := obj.Type().(*gotypes.Signature); ok && sig.Recv() == nil {
				t := b.u.Function(funcName(obj.String()))
				t.Kind = types.DeclarationOf
				t.Underlying = b.walk(nil, obj.Type())
				b.addComments(obj, t)
			}
		case *gotypes.Var:
			if !obj.IsField() {
				t := b.u.Variable(varName(obj.String()))
				t.Kind = types.DeclarationOf
				t.Underlying = b.walk(nil, obj.Type())
				b.addComments(obj, t)
			}
		case *gotypes.Const:
			t := b.u.Constant(varName(obj.String()))
			t.Kind = types.DeclarationOf
			t.Underlying = b.walk(nil, obj.Type())
			value := obj.Val().String()
			if obj.Val().Kind() == constant.String {
				value = constant.StringVal(obj.Val())
			}
			t.ConstValue = &value
			b.addComments(obj, t)
		}
	}
	imports := sortedImports(p)
	b.u.AddImports(p.PkgPath, imports...)
	return nil
}

// addPackageComments sets the comments of the package from its doc.go,
// the only file gengo reads package tags from.
func (b *Builder) addPackageComments(p *loader.Package, pkg *types.Package) {
	for _, f := range p.Syntax {
		if filepath.Base(b.fset.Position(f.FileStart).Filename) != "doc.go" {
			continue
		}
		pkg.Comments = []string{}
		for _, c := range f.Comments {
			pkg.Comments = append(pkg.Comments, splitLines(c.Text())...)
		}
		if f.Doc != nil {
			pkg.DocComments = splitLines(f.Doc.Text())
		}
	}
}

// addComments sets the doc comment and the detached comment group before
// obj, keeping comments already set by an identical walk.
// An alias does not replace the comments of the type it names.
func (b *Builder) addComments(obj gotypes.Object, t *types.Type) {
	if lines := b.docComment(obj.Pos()); len(lines) > 0 && (len(t.CommentLines) == 0 || !isAlias(obj.Type())) {
		t.CommentLines = lines
	}
	if lines := b.detachedComment(obj.Pos()); len(lines) > 0 && (len(t.SecondClosestCommentLines) == 0 || !isAlias(obj.Type())) {
		t.SecondClosestCommentLines = lines
	}
}

// docComment returns the comment group that ends on the line before pos.
func (b *Builder) docComment(pos token.Pos) []string {
	return splitLines(b.commentBefore(pos, 1).Text())
}

// detachedComment returns the comment group that ends two lines before
// the doc comment of pos (or before pos when it has none): a group
// separated from the declaration by one blank line.
func (b *Builder) detachedComment(pos token.Pos) []string {
	if doc := b.commentBefore(pos, 1); doc != nil {
		return splitLines(b.commentBefore(doc.List[0].Slash, 2).Text())
	}
	return splitLines(b.commentBefore(pos, 2).Text())
}

func (b *Builder) commentBefore(pos token.Pos, lines int) *ast.CommentGroup {
	p := b.fset.Position(pos)
	return b.endLine[fileLine{p.Filename, p.Line - lines}]
}

func splitLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

func isAlias(t gotypes.Type) bool {
	_, ok := t.(*gotypes.Alias)
	return ok
}

// walk returns the universe's type for in, adding it and what it refers
// to. name overrides the name derived from in.
func (b *Builder) walk(name *types.Name, in gotypes.Type) *types.Type {
	if a, ok := in.(*gotypes.Alias); ok {
		return b.walk(nil, gotypes.Unalias(a))
	}
	n := typeName(in.String())
	if name != nil {
		n = *name
	}
	switch t := in.(type) {
	case *gotypes.Basic:
		out := b.u.Type(types.Name{Name: t.Name()})
		return b.fill(out, in, types.Unsupported, nil)
	case *gotypes.Struct:
		return b.fill(b.u.Type(n), in, types.Struct, func(out *types.Type) {
			for i := 0; i < t.NumFields(); i++ {
				f := t.Field(i)
				out.Members = append(out.Members, types.Member{
					Name:         f.Name(),
					Embedded:     f.Anonymous(),
					Tags:         t.Tag(i),
					Type:         b.walk(nil, f.Type()),
					CommentLines: b.docComment(f.Pos()),
				})
			}
		})
	case *gotypes.Map:
		return b.fill(b.u.Type(n), in, types.Map, func(out *types.Type) {
			out.Elem = b.walk(nil, t.Elem())
			out.Key = b.walk(nil, t.Key())
		})
	case *gotypes.Pointer:
		return b.fill(b.u.Type(n), in, types.Pointer, func(out *types.Type) { out.Elem = b.walk(nil, t.Elem()) })
	case *gotypes.Slice:
		return b.fill(b.u.Type(n), in, types.Slice, func(out *types.Type) { out.Elem = b.walk(nil, t.Elem()) })
	case *gotypes.Array:
		return b.fill(b.u.Type(n), in, types.Array, func(out *types.Type) {
			out.Elem = b.walk(nil, t.Elem())
			out.Len = t.Len()
		})
	case *gotypes.Chan:
		return b.fill(b.u.Type(n), in, types.Chan, func(out *types.Type) { out.Elem = b.walk(nil, t.Elem()) })
	case *gotypes.Signature:
		return b.fill(b.u.Type(n), in, types.Func, func(out *types.Type) { out.Signature = b.signature(t) })
	case *gotypes.Interface:
		return b.fill(b.u.Type(n), in, types.Interface, func(out *types.Type) {
			t.Complete()
			for i := 0; i < t.NumMethods(); i++ {
				b.addMethod(out, t.Method(i))
			}
		})
	case *gotypes.Named:
		return b.named(t)
	case *gotypes.TypeParam:
		return &types.Type{Name: n, Kind: types.TypeParam}
	default:
		return b.fill(b.u.Type(n), in, types.Unsupported, nil)
	}
}

// fill sets the kind of out and calls more to fill the rest, unless an
// earlier walk already did.
func (b *Builder) fill(out *types.Type, in gotypes.Type, kind types.Kind, more func(*types.Type)) *types.Type {
	out.GoType = in
	if out.Kind != types.Unknown {
		return out
	}
	out.Kind = kind
	if more != nil {
		more(out)
	}
	return out
}

// named walks a named type: aliases of basic, map, slice and named types
// become Alias types; structs and interfaces are flattened into the named
// type, as gengo models them.
func (b *Builder) named(t *gotypes.Named) *types.Type {
	var out *types.Type
	n := typeName(t.String())
	switch t.Underlying().(type) {
	case *gotypes.Named, *gotypes.Basic, *gotypes.Map, *gotypes.Slice:
		out = b.u.Type(n)
		out.GoType = t
		if out.Kind != types.Unknown {
			return out
		}
		out.Kind = types.Alias
		out.Underlying = b.walk(nil, t.Underlying())
	case *gotypes.Struct, *gotypes.Interface:
		params := map[string]*types.Type{}
		if t.TypeParams().Len() != 0 {
			var names []string
			for i := 0; i < t.TypeParams().Len(); i++ {
				tp := t.TypeParams().At(i)
				names = append(names, tp.Obj().Name())
				params[tp.Obj().Name()] = b.walk(nil, tp.Constraint())
			}
			n.Name = fmt.Sprintf("%s[%s]", strings.SplitN(n.Name, "[", 2)[0], strings.Join(names, ","))
		}
		if existing := b.u.Type(n); existing.Kind != types.Unknown {
			existing.GoType = t
			return existing
		}
		out = b.walk(&n, t.Underlying())
		out.TypeParams = params
	default:
		if existing := b.u.Type(n); existing.Kind != types.Unknown {
			return existing
		}
		out = b.walk(&n, t.Underlying())
	}
	if len(out.Methods) == 0 {
		for i := 0; i < t.NumMethods(); i++ {
			b.addMethod(out, t.Method(i))
		}
	}
	return out
}

func (b *Builder) addMethod(out *types.Type, m *gotypes.Func) {
	if out.Methods == nil {
		out.Methods = map[string]*types.Type{}
	}
	n := funcName(m.String())
	mt := b.walk(&n, m.Type())
	mt.CommentLines = b.docComment(m.Pos())
	out.Methods[m.Name()] = mt
}

func (b *Builder) signature(t *gotypes.Signature) *types.Signature {
	s := &types.Signature{Variadic: t.Variadic()}
	for i := 0; i < t.Params().Len(); i++ {
		p := t.Params().At(i)
		s.Parameters = append(s.Parameters, &types.ParamResult{Name: p.Name(), Type: b.walk(nil, p.Type())})
	}
	for i := 0; i < t.Results().Len(); i++ {
		r := t.Results().At(i)
		s.Results = append(s.Results, &types.ParamResult{Name: r.Name(), Type: b.walk(nil, r.Type())})
	}
	if r := t.Recv(); r != nil {
		s.Receiver = b.walk(nil, r.Type())
	}
	return s
}

// funcName and varName turn go/types' object strings ("func p.F(...)",
// "var p.V T") into names, as gengo does.
func funcName(s string) types.Name {
	return typeName(strings.SplitN(strings.TrimPrefix(s, "func "), "(", 2)[0])
}

func varName(s string) types.Name { return typeName(strings.Split(s, " ")[1]) }

// typeName turns a go/types type string into a gengo name: anonymous
// types keep their whole string as the name; named ones split at the last
// dot before any type arguments into package path and name.
func typeName(s string) types.Name {
	for _, prefix := range []string{"struct{", "<-chan", "chan<-", "chan ", "func(", "func (", "*", "map[", "["} {
		if strings.HasPrefix(s, prefix) {
			return types.Name{Name: s}
		}
	}
	generic := strings.IndexRune(s, '[')
	if generic < 0 {
		generic = len(s)
	}
	n := types.Name{Name: s}
	if dot := strings.LastIndex(s[:generic], "."); dot >= 0 {
		n.Package, n.Name = s[:dot], s[dot+1:]
	}
	return n
}
