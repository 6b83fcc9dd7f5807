package model

import (
	"go/ast"
	"go/token"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/diag"
)

// The marker lines of a package's files, and where a marker stands.

// markerLine is one marker comment that opgen reads itself, rather than
// through the collector, because it needs the marker's own position: every
// +opgen: marker and every +groupName.
type markerLine struct {
	Pos  token.Position
	Text string // without the // and surrounding space, starting with +
	// Type is the type declaration the marker documents, or nil for a
	// package-level marker or one inside a declaration.
	Type *ast.TypeSpec
}

// scannedPrefixes are the markers scanMarkers returns: opgen's own, and
// code-generator's tags, which controller-tools does not parse.
var scannedPrefixes = []string{"+opgen:", "+groupName", "+groupGoName", "+genclient", "+k8s:deepcopy-gen", "+kubebuilder:skip"}

// scanMarkers returns the markers of pkg that opgen reads itself (see
// scannedPrefixes), in file order. A marker documents a type when it is in the type's doc comment or
// in a comment group between the previous declaration and the type, as
// controller-tools associates type markers.
func scanMarkers(fset *token.FileSet, pkg *loader.Package) []markerLine {
	pkg.NeedSyntax()
	var out []markerLine
	for _, file := range pkg.Syntax {
		owner := commentOwners(file)
		for _, group := range file.Comments {
			for _, c := range group.List {
				text, ok := markerText(c.Text)
				if !ok || !hasAnyPrefix(text, scannedPrefixes) {
					continue
				}
				out = append(out, markerLine{Pos: fset.Position(c.Pos()), Text: text, Type: owner[group]})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return diag.Before(out[i].Pos, out[j].Pos) })
	return out
}

func markerText(comment string) (string, bool) {
	if !strings.HasPrefix(comment, "//") {
		return "", false
	}
	text := strings.TrimSpace(comment[2:])
	return text, strings.HasPrefix(text, "+")
}

// commentOwners maps the comment groups of file that document a type
// declaration to the type.
func commentOwners(file *ast.File) map[*ast.CommentGroup]*ast.TypeSpec {
	owners := map[*ast.CommentGroup]*ast.TypeSpec{}
	prevEnd := file.Name.End()
	ci := 0
	for _, decl := range file.Decls {
		gd, isType := decl.(*ast.GenDecl)
		// Comment groups between the previous declaration and this one.
		for ; ci < len(file.Comments) && file.Comments[ci].Pos() < decl.Pos(); ci++ {
			g := file.Comments[ci]
			if g.Pos() > prevEnd && isType && gd.Tok == token.TYPE && len(gd.Specs) == 1 {
				owners[g] = gd.Specs[0].(*ast.TypeSpec)
			}
		}
		if isType && gd.Tok == token.TYPE {
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if ts.Doc != nil {
					owners[ts.Doc] = ts
				}
			}
		}
		// Skip the comments inside the declaration.
		for ; ci < len(file.Comments) && file.Comments[ci].Pos() < decl.End(); ci++ {
		}
		prevEnd = decl.End()
	}
	return owners
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// docMarker returns DocMarker of the declaration at decl, from the roots'
// parsed files.
func (b *apiBuilder) docMarker(decl token.Position, match func(text string) bool) (token.Position, bool) {
	return DocMarker(b.in.Fset, b.parsedFile(decl.Filename), decl, match)
}

// DocMarker returns the position of a line of the doc comment right above
// the declaration at decl in f (the comment lines that end on the line
// before it) whose text, less the slashes, satisfies match, the line
// nearest the declaration first; or decl and false. It gives a position to
// markers that controller-tools parses without keeping theirs.
func DocMarker(fset *token.FileSet, f *ast.File, decl token.Position, match func(text string) bool) (token.Position, bool) {
	if f == nil {
		return decl, false
	}
	for _, g := range f.Comments {
		if fset.Position(g.End()).Line != decl.Line-1 {
			continue
		}
		for _, cm := range slices.Backward(g.List) {
			if match(strings.TrimSpace(strings.TrimPrefix(cm.Text, "//"))) {
				return fset.Position(cm.Pos()), true
			}
		}
	}
	return decl, false
}

// IsMarker matches the text of a marker line that sets name, with or
// without a value.
func IsMarker(name string) func(string) bool {
	return func(text string) bool {
		return text == name || strings.HasPrefix(text, name+"=") || strings.HasPrefix(text, name+":")
	}
}

// parsedFile returns the root's file at path, parsed.
func (b *apiBuilder) parsedFile(path string) *ast.File {
	if b.files == nil {
		b.files = map[string]*ast.File{}
		for _, r := range b.in.Roots {
			for _, f := range r.Syntax {
				b.files[b.in.Fset.Position(f.FileStart).Filename] = f
			}
		}
	}
	return b.files[path]
}
