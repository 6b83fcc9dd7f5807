package conversion

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

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
	// site, for a function conversion-gen calls between two types of
	// different names, is the field whose conversion calls it: conversion-gen
	// writes no autoConvert function for such a pair, so a stub of it has
	// none to call.
	site *field
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

var (
	definedFunc = regexp.MustCompile(`^func (Convert_[A-Za-z0-9_]+)\(`)
	calledFunc  = regexp.MustCompile(`(?:^|[^.\w])(Convert_([A-Za-z0-9]+)_([A-Za-z0-9]+)_To_([A-Za-z0-9]+)_([A-Za-z0-9]+))\(&in\.(\w+),`)
)

// undefinedCalls returns the functions conversion-gen's output calls but
// neither it nor the user declares, nor the known needs name: where a field's type has another name
// in the other version (Endpoint and Target), conversion-gen calls
// Convert_<from>_Endpoint_To_<to>_Target and leaves it to be written by
// hand, without a warning.
func undefinedCalls(src []byte, user userFuncs, known []*need) []*need {
	lines := strings.Split(string(src), "\n")
	defined := map[string]bool{}
	for _, n := range known {
		defined[n.fn] = true // a need of its own already
	}
	for _, line := range lines {
		if m := definedFunc.FindStringSubmatch(line); m != nil {
			defined[m[1]] = true
		}
	}
	var out []*need
	seen := map[string]bool{}
	var in string // the type the enclosing autoConvert function converts
	for _, line := range lines {
		if m := autoFunc.FindStringSubmatch(line); m != nil {
			in = m[2]
			continue
		}
		m := calledFunc.FindStringSubmatch(line)
		if m == nil || defined[m[1]] || seen[m[1]] || in == "" {
			continue
		}
		if _, ok := user.funcs[m[1]]; ok && user.funcs[m[1]].stub == "" {
			continue
		}
		seen[m[1]] = true
		out = append(out, &need{
			fn: m[1], from: m[2], typ: m[3], to: m[4], toType: m[5],
			fields:  []string{m[6]},
			reasons: []string{fmt.Sprintf("its type is %s in %s and %s in %s", m[3], m[2], m[5], m[4])},
			site:    &field{typ: in, name: m[6]},
		})
	}
	return out
}

// userFunc is a conversion function the user declared.
type userFunc struct {
	pos  token.Position
	stub string // the field the stub's error names, when it is the stub
}

// userFuncs are the conversion functions of a spoke's own files, and
// which of StubFile and ExtraStubFile it has.
type userFuncs struct {
	funcs                     map[string]userFunc
	hasStubFile, hasExtraFile bool
}

// freeStubFile is the file a stub of this run may go to: StubFile, or
// ExtraStubFile when the spoke has StubFile already; "" when it has both,
// since opgen never overwrites either.
func (u userFuncs) freeStubFile() string {
	switch {
	case !u.hasStubFile:
		return StubFile
	case !u.hasExtraFile:
		return ExtraStubFile
	}
	return ""
}

// userFunctions returns the Convert_ functions declared in the spoke's
// files that are not generated, from the run's load.
func userFunctions(ctx *gen.Context, v *model.Version) userFuncs {
	out := userFuncs{funcs: map[string]userFunc{}}
	if _, err := os.Stat(filepath.Join(v.Dir, StubFile)); err == nil {
		out.hasStubFile = true
	}
	if _, err := os.Stat(filepath.Join(v.Dir, ExtraStubFile)); err == nil {
		out.hasExtraFile = true
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
// stubs those it can: in StubFile when the spoke has none, else in
// ExtraStubFile when it has none. A need that a stub of this run or an
// earlier one answers is a stub error: the run's output builds with the
// stubs, so the run writes it and fails until the stubs are completed. A
// need no stub can answer fails the run, which then writes nothing.
func (g *Generator) checkFunctions(ctx *gen.Context, s *spoke, needs []*need) {
	if len(needs) == 0 {
		return
	}
	v := s.version
	user := g.user[v.ImportPath]
	stubFile := user.freeStubFile()
	rel := func(name string) string {
		r, _ := filepath.Rel(ctx.Project.Root, filepath.Join(v.Dir, name))
		return r
	}
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
			ctx.Errors.AddStub(fn.pos, "%s is still opgen's stub: it returns \"%s%s%s\"; convert %s (%s) there and return nil, or mark the field %s to lose it on purpose", n.fn, stubPrefix, fn.stub, stubSuffix, describe(n), strings.Join(at, ", "), DropMarker)
		case stubFile != "":
			stubs = append(stubs, n)
			for i, f := range n.fields {
				ctx.Errors.AddStub(g.needPos(s, n, f), "%s (%s) cannot be converted to %s by itself: %s; opgen wrote a stub of %s in %s, which builds and returns an error: convert the field there and return nil, or mark the field %s to lose it on purpose; then run go generate again", fieldName(n, f), n.from, n.to, n.reasons[i], n.fn, rel(stubFile), DropMarker)
			}
		default:
			for i, f := range n.fields {
				ctx.Errors.Add(g.needPos(s, n, f), "%s (%s) cannot be converted to %s by itself: %s; write it in %s: func %s(in *%s, out *%s, s conversion.Scope) error%s; or mark the field %s to lose it on purpose", fieldName(n, f), n.from, n.to, n.reasons[i], rel(StubFile), n.fn, typeIn(v, n, true), typeIn(v, n, false), callingAuto(n), DropMarker)
			}
		}
	}
	if len(stubs) > 0 {
		src, err := stubFileSource(v, s.hubs, stubs)
		if err != nil {
			ctx.Errors.Add(v.Pos, "render the conversion stubs of %s: %v", v.ImportPath, err)
			return
		}
		ctx.Output.Stub(filepath.Join(v.Dir, stubFile), src)
	}
}

// fieldName names field f of need n as its type declares it: the type
// the need converts, or, for a function called between types of
// different names, the type that holds the field.
func fieldName(n *need, f string) string {
	if n.site != nil {
		return n.site.typ + "." + f
	}
	return n.typ + "." + f
}

// callingAuto is the advice to call the generated autoConvert function,
// when conversion-gen writes one for the need.
func callingAuto(n *need) string {
	if n.site != nil {
		return ""
	}
	return ", calling auto" + n.fn + " for the other fields"
}

// describe names the fields a function converts.
func describe(n *need) string {
	var named []string
	for _, f := range n.fields {
		if f != "" {
			named = append(named, fieldName(n, f))
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
	typ := n.typ
	if n.site != nil {
		typ = n.site.typ
	}
	if pos, ok := g.fields[field{from.ImportPath, typ, name}]; ok && name != "" {
		return pos
	}
	return from.Pos
}

// alias is conversion-gen's name of a version's package in function names:
// the last element of its import path.
func alias(v *model.Version) string { return filepath.Base(v.ImportPath) }

// typeIn writes the in (or out) type of n as the spoke's code names it.
func typeIn(v *model.Version, n *need, in bool) string {
	pkg, typ := n.from, n.typ
	if !in {
		pkg, typ = n.to, n.toType
	}
	if pkg == alias(v) {
		return typ
	}
	return pkg + "." + typ
}
