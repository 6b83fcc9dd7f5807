package compat

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// marker is one +opgen:compat:allow line.
type marker struct {
	pos    token.Position
	rule   Rule
	field  string // field-removed: the removed field's JSON name
	vers   string // version-removed: the removed version
	reason string
	used   bool
}

// allows are the +opgen:compat:allow markers of the project, by the
// position of the name (field or type) whose doc comment holds them.
type allows struct {
	ctx     *gen.Context
	byOwner map[token.Position][]*marker
	all     []*marker
	parsed  map[string]bool
}

const markerPrefix = "+" + markers.CompatAllow

func newAllows(ctx *gen.Context) *allows {
	a := &allows{ctx: ctx, byOwner: map[token.Position][]*marker{}, parsed: map[string]bool{}}
	for _, v := range ctx.API.Versions() {
		for _, file := range v.Package.GoFiles {
			a.file(file)
		}
	}
	return a
}

// file reads the markers of one Go file, once; a file without the marker
// is not parsed.
func (a *allows) file(path string) {
	if a.parsed[path] {
		return
	}
	a.parsed[path] = true
	src, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(src, []byte(markerPrefix)) {
		return
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return // the run reports the syntax error
	}
	for owner, group := range docOwners(f) {
		for _, c := range group.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if !strings.HasPrefix(text, markerPrefix) {
				continue
			}
			m, err := parseMarker(text)
			pos := fset.Position(c.Pos())
			if err != nil {
				a.ctx.Errors.Add(pos, "%v", err)
				continue
			}
			m.pos = pos
			key := ownerKey(fset.Position(owner))
			a.byOwner[key] = append(a.byOwner[key], m)
			a.all = append(a.all, m)
		}
	}
}

// docOwners maps the names of f's types and struct fields to their doc
// comments. A type's doc is its comment, or, for a lone type declaration,
// every comment group between the previous declaration and it, as
// controller-tools reads type markers.
func docOwners(f *ast.File) map[token.Pos]*ast.CommentGroup {
	out := map[token.Pos]*ast.CommentGroup{}
	prevEnd := f.Name.End()
	ci := 0
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		for ; ci < len(f.Comments) && f.Comments[ci].Pos() < decl.Pos(); ci++ {
			if ok && gd.Tok == token.TYPE && len(gd.Specs) == 1 && f.Comments[ci].Pos() > prevEnd {
				out[gd.Specs[0].(*ast.TypeSpec).Name.Pos()] = merge(out[gd.Specs[0].(*ast.TypeSpec).Name.Pos()], f.Comments[ci])
			}
		}
		for ; ci < len(f.Comments) && f.Comments[ci].Pos() < decl.End(); ci++ {
		}
		prevEnd = decl.End()
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if ts.Doc != nil {
				out[ts.Name.Pos()] = merge(out[ts.Name.Pos()], ts.Doc)
			}
			ast.Inspect(ts.Type, func(n ast.Node) bool {
				if field, ok := n.(*ast.Field); ok && field.Doc != nil && len(field.Names) > 0 {
					out[field.Names[0].Pos()] = field.Doc
				}
				return true
			})
		}
	}
	return out
}

// ownerKey is a position without its offset, which two parses of a file
// agree on anyway: a key by file, line and column.
func ownerKey(p token.Position) token.Position {
	return token.Position{Filename: p.Filename, Line: p.Line, Column: p.Column}
}

func merge(a, b *ast.CommentGroup) *ast.CommentGroup {
	if a == nil {
		return b
	}
	return &ast.CommentGroup{List: append(append([]*ast.Comment(nil), a.List...), b.List...)}
}

// parseMarker parses
//
//	+opgen:compat:allow=<rule> [field=<name>] [version=<name>] reason="<why>"
func parseMarker(text string) (*marker, error) {
	usage := fmt.Sprintf(`write it %s=<rule> reason="<why the break is acceptable>" (rules: %s)`, markerPrefix, ruleNames())
	rest, ok := strings.CutPrefix(text, markerPrefix+"=")
	if !ok {
		return nil, fmt.Errorf("%s names no rule: %s", markerPrefix, usage)
	}
	rule, args, _ := strings.Cut(rest, " ")
	if !knownRule(rule) {
		return nil, fmt.Errorf("%s: unknown rule %q%s: %s", markerPrefix, rule, suggest(rule), usage)
	}
	m := &marker{rule: Rule(rule)}
	for args = strings.TrimSpace(args); args != ""; args = strings.TrimSpace(args) {
		key, value, rest, err := nextArg(args)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %v: %s", markerPrefix, rule, err, usage)
		}
		args = rest
		switch key {
		case "reason":
			m.reason = value
		case "field":
			m.field = value
		case "version":
			m.vers = value
		default:
			return nil, fmt.Errorf("%s=%s: unknown argument %q (arguments: reason, field for field-removed, version for version-removed)", markerPrefix, rule, key)
		}
	}
	switch {
	case strings.TrimSpace(m.reason) == "":
		return nil, fmt.Errorf(`%s=%s has no reason: add reason="..." saying why breaking objects of the last release is acceptable`, markerPrefix, rule)
	case m.rule == FieldRemoved && m.field == "":
		return nil, fmt.Errorf("%s=field-removed names no field: add field=<its JSON name>, since the field it acknowledges no longer exists", markerPrefix)
	case m.rule == VersionRemoved && m.vers == "":
		return nil, fmt.Errorf("%s=version-removed names no version: add version=<the removed version>", markerPrefix)
	case m.field != "" && m.rule != FieldRemoved:
		return nil, fmt.Errorf("%s=%s: field= is for field-removed only; put the marker above the field itself", markerPrefix, rule)
	case m.vers != "" && m.rule != VersionRemoved:
		return nil, fmt.Errorf("%s=%s: version= is for version-removed only", markerPrefix, rule)
	}
	return m, nil
}

// nextArg splits key=value off s; a value is a Go string literal or runs
// to the next space.
func nextArg(s string) (key, value, rest string, err error) {
	key, s, ok := strings.Cut(s, "=")
	if !ok || key == "" || strings.ContainsFunc(key, unicode.IsSpace) {
		return "", "", "", fmt.Errorf("%q is not key=value", strings.Fields(key + s)[0])
	}
	if strings.HasPrefix(s, `"`) {
		quoted, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", "", fmt.Errorf("%s: the quoted value does not end", key)
		}
		value, _ = strconv.Unquote(quoted)
		return key, value, s[len(quoted):], nil
	}
	value, rest, _ = strings.Cut(s, " ")
	return key, value, rest, nil
}

func suggest(name string) string {
	best, bestDist := "", 1<<30
	for _, r := range Rules {
		if d := markers.Distance(name, string(r)); d < bestDist {
			best, bestDist = string(r), d
		}
	}
	if bestDist <= len(best)/2 {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return ""
}

// acknowledge marks and returns the marker at one of s's owners that
// acknowledges f, or nil.
func (a *allows) acknowledge(f Finding, s site) *marker {
	for _, owner := range s.owners {
		a.file(owner.Filename)
		for _, m := range a.byOwner[ownerKey(owner)] {
			if m.rule != f.Rule || f.Rule == FieldRemoved && m.field != f.Name || f.Rule == VersionRemoved && m.vers != f.Name {
				continue
			}
			m.used = true
			return m
		}
	}
	return nil
}
