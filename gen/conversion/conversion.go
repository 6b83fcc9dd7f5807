// Package conversion generates the typed conversion of every spoke version
// of a kind to and from its hub (the version marked
// +kubebuilder:storageversion), for the kinds whose served versions differ
// (gen.API.Conversions).
//
// It drives k8s.io/code-generator's conversion-gen as a Go package, in
// process, with the hub's package as the peer of every spoke: the tag
// +k8s:conversion-gen=<hub import path> is set on the spoke's package in
// gengo's universe, so the user writes no tag. conversion-gen writes
// zz_generated.conversion.go in the spoke, field by field for every field
// whose name and type match in both versions, with RegisterConversions,
// which it registers in the spoke's SchemeBuilder: the spoke's AddToScheme
// then adds the conversions to a scheme.
//
// # What it cannot convert
//
// A field that has no counterpart of the same name and type in the other
// version needs a hand-written Convert_<from>_<Type>_To_<to>_<Type>
// function in the spoke package, which conversion-gen then calls. For each
// one missing, the generator:
//
//   - when the spoke has no conversion.go, writes it, once, with a stub of
//     every missing function, and warns about each field with its
//     position; the stub converts the other fields and returns the error
//     "conversion of field <Name> not written", so that no object is
//     converted with the field silently lost;
//   - otherwise fails, naming each field with its position, until the
//     function exists (the error shows its signature) and its body no
//     longer returns the stub's error: a function is recognised as the
//     stub when a string literal in its body begins "conversion of field "
//     and ends " not written".
//
// A field marked +opgen:conversion:drop is lost on purpose: it needs no
// function (conversion-gen skips it, as with +k8s:conversion-gen=false)
// and the round-trip test leaves it out.
package conversion

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/tools/go/packages"
	convargs "k8s.io/code-generator/cmd/conversion-gen/args"
	convgen "k8s.io/code-generator/cmd/conversion-gen/generators"
	"k8s.io/gengo/v2/generator"
	gengoparser "k8s.io/gengo/v2/parser"
	"k8s.io/gengo/v2/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
	opgenmarkers "github.com/opgen-sdk/opgen/gen/markers"
)

// FileName is the generated file of each spoke; StubFile is the user's
// file of hand-written conversions, written once.
const (
	FileName = "zz_generated.conversion.go"
	StubFile = "conversion.go"
	// DropMarker marks a field that a conversion loses on purpose.
	DropMarker = "+" + opgenmarkers.ConversionDrop
)

// Generator writes the conversions.
type Generator struct{}

var _ gen.Generator = Generator{}

// RegisterMarkers registers nothing: the drop marker is read from the
// field comments (see DropMarker).
func (Generator) RegisterMarkers(*markers.Registry) error { return nil }

// spoke is one spoke package and the hub packages of its kinds.
type spoke struct {
	version *gen.Version
	hubs    []*gen.Version
}

// Generate runs conversion-gen on every spoke package.
func (Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInEveryPackage(FileName)
	ctx.OwnInEveryPackage(TestFileName)
	writeGlue(ctx)
	spokes := spokesOf(ctx.API)
	if len(spokes) == 0 {
		return nil
	}
	drops := dropped(ctx)
	staged, err := run(ctx, spokes, drops)
	if err != nil {
		return err
	}
	for _, s := range spokes {
		src := staged[s.version.ImportPath]
		if src == nil {
			continue
		}
		dir := s.version.Dir
		needs := missing(src)
		checkFunctions(ctx, s, needs, drops)
		src = append(src, []byte("\n// localSchemeBuilder is the scheme builder conversion-gen registers\n// RegisterConversions with.\nvar localSchemeBuilder = &SchemeBuilder\n")...)
		ctx.Output.Go(filepath.Join(dir, FileName), src)
		roundTripTest(ctx, s, drops)
	}
	return nil
}

// spokesOf returns the spoke packages of the API's conversions, by
// import path, each with its hubs.
func spokesOf(api *gen.API) []*spoke {
	by := map[string]*spoke{}
	for _, c := range api.Conversions {
		for _, k := range c.Spokes {
			s := by[k.Version.ImportPath]
			if s == nil {
				s = &spoke{version: k.Version}
				by[k.Version.ImportPath] = s
			}
			if !slices.Contains(s.hubs, c.Hub.Version) {
				s.hubs = append(s.hubs, c.Hub.Version)
			}
		}
	}
	var out []*spoke
	for _, s := range by {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version.ImportPath < out[j].version.ImportPath })
	return out
}

// field is a struct field of an API package.
type field struct {
	pkg, typ, name string
}

// dropped returns the fields of the API packages marked DropMarker.
func dropped(ctx *gen.Context) map[field]token.Position {
	out := map[field]token.Position{}
	for _, v := range ctx.API.Versions() {
		eachField(v, func(typ string, f *ast.Field, name *ast.Ident) {
			if f.Doc == nil {
				return
			}
			for _, c := range f.Doc.List {
				if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == DropMarker {
					out[field{v.ImportPath, typ, name.Name}] = ctx.Position(c.Pos())
				}
			}
		})
	}
	return out
}

// eachField calls fn for every named field of every struct type of v.
func eachField(v *gen.Version, fn func(typ string, f *ast.Field, name *ast.Ident)) {
	for _, file := range v.Package.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					for _, name := range f.Names {
						fn(ts.Name.Name, f, name)
					}
				}
			}
			return false
		})
	}
}

// fieldPos returns the position of a field of v, or of the package when
// it is not found.
func fieldPos(ctx *gen.Context, v *gen.Version, typ, name string) token.Position {
	pos := v.Pos
	eachField(v, func(t string, _ *ast.Field, id *ast.Ident) {
		if t == typ && id.Name == name {
			pos = ctx.Position(id.Pos())
		}
	})
	return pos
}

// run loads the spokes and hubs with gengo, sets the tags and runs
// conversion-gen, returning the generated file of each spoke.
func run(ctx *gen.Context, spokes []*spoke, drops map[field]token.Position) (map[string][]byte, error) {
	args := convargs.New()
	args.OutputFile = FileName
	var patterns []string
	for _, s := range spokes {
		patterns = append(patterns, s.version.ImportPath)
		for _, h := range s.hubs {
			patterns = append(patterns, h.ImportPath)
		}
	}
	patterns = append(patterns, args.BasePeerDirs...)
	quietKlog()
	p := gengoparser.NewWithOptions(gengoparser.Options{BuildTags: []string{args.GeneratedBuildTag}})
	if err := p.LoadPackagesWithConfigForTesting(&packages.Config{Dir: ctx.Project.Root}, patterns...); err != nil {
		return nil, fmt.Errorf("load the API packages for conversion-gen: %w", err)
	}
	c, err := generator.NewContext(p, convgen.NameSystems(), convgen.DefaultNameSystem())
	if err != nil {
		return nil, fmt.Errorf("conversion-gen: %w", err)
	}
	c.Inputs = nil
	for _, s := range spokes {
		pkg := c.Universe[s.version.ImportPath]
		if pkg == nil {
			return nil, fmt.Errorf("gengo did not load %s", s.version.ImportPath)
		}
		c.Inputs = append(c.Inputs, s.version.ImportPath)
		for _, h := range s.hubs {
			pkg.Comments = append(pkg.Comments, "+k8s:conversion-gen="+h.ImportPath)
		}
	}
	markDropped(c.Universe, drops)
	out := map[string][]byte{}
	c.FileTypes = map[string]generator.FileType{generator.GoFileType: capture(out)}
	targets := convgen.GetTargets(c, args)
	if err := c.ExecuteTargets(targets); err != nil {
		return nil, fmt.Errorf("conversion-gen: %w", err)
	}
	return out, nil
}

// quietKlog silences conversion-gen's klog lines: what they say about
// fields it cannot convert, the run reports with positions.
func quietKlog() {
	klog.SetLogger(logr.Discard())
}

// markDropped gives the dropped fields conversion-gen's opt-out tag.
func markDropped(u types.Universe, drops map[field]token.Position) {
	for f := range drops {
		pkg := u[f.pkg]
		if pkg == nil || pkg.Types[f.typ] == nil {
			continue
		}
		t := pkg.Types[f.typ]
		for i := range t.Members {
			if t.Members[i].Name == f.name {
				t.Members[i].CommentLines = append(t.Members[i].CommentLines, "+k8s:conversion-gen=false")
			}
		}
	}
}

// capture assembles gengo's files into out, by package path.
type capture map[string][]byte

func (c capture) AssembleFile(f *generator.File, _ string) error {
	var b bytes.Buffer
	et := generator.NewErrorTracker(&b)
	generator.NewGoFile().Assemble(et, f)
	if et.Error() != nil {
		return et.Error()
	}
	c[f.PackagePath] = b.Bytes()
	return nil
}

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

// userFunctions returns the Convert_ functions declared in the spoke's
// files that are not generated.
func userFunctions(dir string) (map[string]userFunc, bool, error) {
	out := map[string]userFunc{}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	hasStubFile := false
	for _, e := range entries {
		name := e.Name()
		if name == StubFile {
			hasStubFile = true
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			continue // the run reports the package's own errors
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Convert_") {
				continue
			}
			out[fn.Name.Name] = userFunc{pos: fset.Position(fn.Name.Pos()), stub: stubField(fn)}
		}
	}
	return out, hasStubFile, nil
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

// checkFunctions reports, or stubs, the hand-written functions the spoke
// needs.
func checkFunctions(ctx *gen.Context, s *spoke, needs []*need, drops map[field]token.Position) {
	if len(needs) == 0 {
		return
	}
	v := s.version
	user, hasStubFile, err := userFunctions(v.Dir)
	if err != nil {
		ctx.Errors.Add(v.Pos, "read the conversion functions of %s: %v", v.ImportPath, err)
		return
	}
	rel, _ := filepath.Rel(ctx.Project.Root, filepath.Join(v.Dir, StubFile))
	var stubs []*need
	for _, n := range needs {
		fn, ok := user[n.fn]
		switch {
		case ok && fn.stub == "":
			continue // the user's
		case ok:
			var at []string
			for _, f := range n.fields {
				at = append(at, needPos(ctx, s, n, f).String())
			}
			ctx.Errors.Add(fn.pos, "%s is still opgen's stub: it returns \"%s%s%s\"; convert %s (%s) there and return nil, or mark the field %s to lose it on purpose", n.fn, stubPrefix, fn.stub, stubSuffix, describe(n), strings.Join(at, ", "), DropMarker)
		case !hasStubFile:
			stubs = append(stubs, n)
			for i, f := range n.fields {
				ctx.Warnings.Add(needPos(ctx, s, n, f), "%s.%s (%s) cannot be converted to %s by itself: %s; opgen wrote a stub of %s in %s, and generation fails until you write it (or mark the field %s)", n.typ, f, n.from, n.to, n.reasons[i], n.fn, rel, DropMarker)
			}
		default:
			for i, f := range n.fields {
				ctx.Errors.Add(needPos(ctx, s, n, f), "%s.%s (%s) cannot be converted to %s by itself: %s; write it in %s, which opgen writes only when it is missing: func %s(in *%s, out *%s, s conversion.Scope) error, calling auto%s for the other fields; or mark the field %s to lose it on purpose", n.typ, f, n.from, n.to, n.reasons[i], rel, n.fn, typeIn(v, n, true), typeIn(v, n, false), n.fn, DropMarker)
			}
		}
	}
	if len(stubs) > 0 {
		src, err := stubFile(v, s.hubs, stubs)
		if err != nil {
			ctx.Errors.Add(v.Pos, "render the conversion stubs of %s: %v", v.ImportPath, err)
			return
		}
		ctx.Output.Scaffold(filepath.Join(v.Dir, StubFile), src)
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
func needPos(ctx *gen.Context, s *spoke, n *need, name string) token.Position {
	from := s.version
	if n.from != alias(s.version) {
		for _, h := range s.hubs {
			if alias(h) == n.from {
				from = h
			}
		}
	}
	if name == "" {
		return from.Pos
	}
	return fieldPos(ctx, from, n.typ, name)
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
