package conversion

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/opgen-sdk/opgen/gen"
)

// need is one hand-written function a spoke must declare, with the fields
// it converts.
type need struct {
	fn       string
	from, to string // package aliases as conversion-gen names them
	typ      string
	toType   string
	fields   []string
	reasons  []string
}

var (
	autoFunc = regexp.MustCompile(`^func autoConvert_([A-Za-z0-9]+)_([A-Za-z0-9]+)_To_([A-Za-z0-9]+)_([A-Za-z0-9]+)\(`)
	warning  = regexp.MustCompile(`^\s*// WARNING: in\.([A-Za-z0-9_]+) requires manual conversion: (.*)$`)
	fixme    = regexp.MustCompile(`^\s*// FIXME: (.*)$`)
)

// missing reads conversion-gen's output for the conversions it left to
// a hand-written function: in each autoConvert function, the fields it
// warns about.
func missing(src []byte) []*need {
	var out []*need
	var cur *need
	for _, line := range strings.Split(string(src), "\n") {
		if m := autoFunc.FindStringSubmatch(line); m != nil {
			cur = &need{from: m[1], typ: m[2], to: m[3], toType: m[4], fn: "Convert_" + m[1] + "_" + m[2] + "_To_" + m[3] + "_" + m[4]}
			continue
		}
		if cur == nil {
			continue
		}
		if m := warning.FindStringSubmatch(line); m != nil {
			if len(cur.fields) == 0 {
				out = append(out, cur)
			}
			reason := m[2]
			if reason == "does not exist in peer-type" {
				reason = cur.to + " " + cur.toType + " has no field " + m[1]
			}
			cur.fields = append(cur.fields, m[1])
			cur.reasons = append(cur.reasons, reason)
		} else if m := fixme.FindStringSubmatch(line); m != nil {
			if len(cur.fields) == 0 {
				out = append(out, cur)
			}
			cur.fields = append(cur.fields, "")
			cur.reasons = append(cur.reasons, m[1])
		}
	}
	return out
}

// userFunc is a conversion function the user declared.
type userFunc struct {
	pos  token.Position
	stub string // the field the stub's error names, when it is the stub
}

// userFuncs are the conversion functions of a spoke's own files, and
// whether it has a StubFile.
type userFuncs struct {
	funcs       map[string]userFunc
	hasStubFile bool
}

// userFunctions returns the Convert_ functions declared in the spoke's
// files that are not generated, from the run's load.
func userFunctions(ctx *gen.Context, v *gen.Version) userFuncs {
	out := userFuncs{funcs: map[string]userFunc{}}
	if _, err := os.Stat(filepath.Join(v.Dir, StubFile)); err == nil {
		out.hasStubFile = true
	}
	for _, f := range v.Package.Syntax {
		if strings.HasPrefix(filepath.Base(ctx.Position(f.Package).Filename), "zz_generated") {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, convertPrefix) {
				continue
			}
			out.funcs[fn.Name.Name] = userFunc{pos: ctx.Position(fn.Name.Pos()), stub: stubField(fn)}
		}
	}
	return out
}

// stubField returns the field named by the stub's error in fn's body, or
// "" when fn is not the stub.
func stubField(fn *ast.FuncDecl) string {
	found := ""
	if fn.Body == nil {
		return ""
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err == nil && strings.HasPrefix(s, stubPrefix) && strings.HasSuffix(s, stubSuffix) {
			found = strings.TrimSuffix(strings.TrimPrefix(s, stubPrefix), stubSuffix)
		}
		return found == ""
	})
	return found
}

const (
	stubPrefix = "conversion of field "
	stubSuffix = " not written"
)

// checkFunctions reports the hand-written functions the spoke needs, and
// stubs them when the spoke has no StubFile yet.
func (g *Generator) checkFunctions(ctx *gen.Context, s *spoke, needs []*need) {
	if len(needs) == 0 {
		return
	}
	v := s.version
	user := g.user[v.ImportPath]
	rel, _ := filepath.Rel(ctx.Project.Root, filepath.Join(v.Dir, StubFile))
	var stubs []*need
	for _, n := range needs {
		fn, ok := user.funcs[n.fn]
		switch {
		case ok && fn.stub == "":
			continue // the user's
		case ok:
			var at []string
			for _, f := range n.fields {
				at = append(at, g.needPos(s, n, f).String())
			}
			ctx.Errors.Add(fn.pos, "%s is still opgen's stub: it returns \"%s%s%s\"; convert %s (%s) there and return nil, or mark the field %s to lose it on purpose", n.fn, stubPrefix, fn.stub, stubSuffix, describe(n), strings.Join(at, ", "), DropMarker)
		case !user.hasStubFile:
			stubs = append(stubs, n)
			for i, f := range n.fields {
				ctx.Errors.Add(g.needPos(s, n, f), "%s.%s (%s) cannot be converted to %s by itself: %s; opgen wrote a stub of %s in %s (and nothing else): convert the field there and return nil, or mark the field %s to lose it on purpose; then run go generate again", n.typ, f, n.from, n.to, n.reasons[i], n.fn, rel, DropMarker)
			}
		default:
			for i, f := range n.fields {
				ctx.Errors.Add(g.needPos(s, n, f), "%s.%s (%s) cannot be converted to %s by itself: %s; write it in %s, which opgen writes only when it is missing: func %s(in *%s, out *%s, s conversion.Scope) error, calling auto%s for the other fields; or mark the field %s to lose it on purpose", n.typ, f, n.from, n.to, n.reasons[i], rel, n.fn, typeIn(v, n, true), typeIn(v, n, false), n.fn, DropMarker)
			}
		}
	}
	if len(stubs) > 0 {
		src, err := stubFile(v, s.hubs, stubs)
		if err != nil {
			ctx.Errors.Add(v.Pos, "render the conversion stubs of %s: %v", v.ImportPath, err)
			return
		}
		ctx.Output.Stub(filepath.Join(v.Dir, StubFile), src)
	}
}

// describe names the fields a function converts.
func describe(n *need) string {
	var named []string
	for _, f := range n.fields {
		if f != "" {
			named = append(named, n.typ+"."+f)
		}
	}
	if len(named) == 0 {
		return n.typ
	}
	return strings.Join(named, ", ")
}

// needPos is where a field that needs a hand-written conversion is
// declared: in the spoke or in the hub, whichever is converted from.
func (g *Generator) needPos(s *spoke, n *need, name string) token.Position {
	from := s.version
	if n.from != alias(s.version) {
		for _, h := range s.hubs {
			if alias(h) == n.from {
				from = h
			}
		}
	}
	if pos, ok := g.fields[field{from.ImportPath, n.typ, name}]; ok && name != "" {
		return pos
	}
	return from.Pos
}

// alias is conversion-gen's name of a version's package in function names:
// the last element of its import path.
func alias(v *gen.Version) string { return filepath.Base(v.ImportPath) }

// typeIn writes the in (or out) type of n as the spoke's code names it.
func typeIn(v *gen.Version, n *need, in bool) string {
	pkg, typ := n.from, n.typ
	if !in {
		pkg, typ = n.to, n.toType
	}
	if pkg == alias(v) {
		return typ
	}
	return pkg + "." + typ
}
