package rbac

// Why each rule: every rule the generator writes comes from a derivation
// (a controller marker and what the runtime does for it) or from a
// +kubebuilder:rbac marker. In opgen's layout role.yaml says so in comments
// before each rule, one line per source, in the form rbacaudit.WhyLine
// writes and `opgen rbac audit` reads back:
//
//	# create, delete, get, list, patch, watch on deployments: +opgen:controller:owns=apps/v1.Deployment on Greeting: ... (apis/hello/v1/greeting_types.go:19)
//
// The adopted layout writes no comments: its role.yaml stays
// controller-gen's, byte for byte.

import (
	"bytes"
	"fmt"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctrbac "sigs.k8s.io/controller-tools/pkg/rbac"

	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
)

// grant is a rule and what asks for it.
type grant struct {
	rule rbacv1.PolicyRule
	// why names the marker or the runtime's need, and the reason.
	why string
	// pos is the marker's line, or no position.
	pos token.Position
}

// locate finds the line of a marker in the doc comment of the declaration
// at decl (gen.Context.DocMarker).
type locate func(decl token.Position, match func(text string) bool) (token.Position, bool)

// whyKind makes the grants of one controller: of the kind or handler type
// named on, declared at decl.
type whyKind struct {
	at   locate
	decl token.Position
	on   string
}

// grant is r, asked for by marker (name=value, or name) on w's type, for
// why.
func (w whyKind) grant(marker, why string, r rbacv1.PolicyRule) grant {
	return grant{rule: r, why: marker + " on " + w.on + ": " + why, pos: w.markerPos(marker)}
}

// markerPos is the line of the marker in the type's doc comment; for
// +opgen:controller, which any +opgen:controller: marker implies, that
// line or else the nearest of the others to the declaration; the
// declaration when none is found.
func (w whyKind) markerPos(marker string) token.Position {
	if w.at == nil {
		return w.decl
	}
	name, _, _ := strings.Cut(marker, "=")
	if p, ok := w.at(w.decl, func(text string) bool { return text == name || strings.HasPrefix(text, name+"=") }); ok {
		return p
	}
	if name == "+opgen:controller" {
		if p, ok := w.at(w.decl, func(text string) bool { return strings.HasPrefix(text, name+":") }); ok {
			return p
		}
	}
	return w.decl
}

// kindRef writes gvk as the controller markers take it:
// [group/]version.Kind.
func kindRef(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "." + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "." + gvk.Kind
}

// leaderElectionGrants are the grants of LeaderElectionRole's rule.
func leaderElectionGrants() []grant {
	return []grant{
		{rule: rule("coordination.k8s.io", "leases", "create", "get", "update", "watch"),
			why: "the runtime's leader election: its Lease in the operator's namespace (watch hands over at once on release)"},
		{rule: rule("coordination.k8s.io", "leases", "delete", "list"),
			why: "sharding (runtime.Options.Sharding): the leader lists the members' Leases and deletes those expired long ago"},
	}
}

// markerLine is a +kubebuilder:rbac marker as written, and where.
type markerLine struct {
	rule ctrbac.Rule
	text string
	pos  token.Position
	used bool
}

// markerLines are the +kubebuilder:rbac markers of a package.
type markerLines []*markerLine

// rbacMarkerLines finds the +kubebuilder:rbac markers of pkg with their
// positions, which the marker collector does not keep.
func rbacMarkerLines(fset *token.FileSet, pkg *loader.Package) markerLines {
	pkg.NeedSyntax()
	var out markerLines
	prefix := "+" + ctrbac.RuleDefinition.Name + ":"
	for _, f := range pkg.Syntax {
		for _, g := range f.Comments {
			for _, c := range g.List {
				text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
				if !strings.HasPrefix(text, prefix) {
					continue
				}
				v, err := ctrbac.RuleDefinition.Parse(text)
				if err != nil {
					continue // the collector reports it
				}
				out = append(out, &markerLine{rule: v.(ctrbac.Rule), text: text, pos: fset.Position(c.Pos())})
			}
		}
	}
	return out
}

// grant is the rule of marker m, with the first line that wrote it.
func (ls markerLines) grant(m ctrbac.Rule) grant {
	for _, l := range ls {
		if !l.used && reflect.DeepEqual(l.rule, m) {
			l.used = true
			return grant{rule: fromMarker(m), why: l.text, pos: l.pos}
		}
	}
	return grant{rule: fromMarker(m), why: "a +kubebuilder:rbac marker"}
}

// relative writes pos as file:line relative to root, or "" for no
// position.
func relative(root string, pos token.Position) string {
	if pos.Filename == "" {
		return ""
	}
	name := pos.Filename
	if r, err := filepath.Rel(root, name); err == nil && !strings.HasPrefix(r, "..") {
		name = r
	}
	return fmt.Sprintf("%s:%d", filepath.ToSlash(name), pos.Line)
}

// annotate inserts before each rule of the marshaled role y the lines
// that say which grants of d it holds.
func annotate(y []byte, d document, rel func(token.Position) string) []byte {
	lines := bytes.SplitAfter(y, []byte("\n"))
	var out bytes.Buffer
	inRules, i := false, 0
	for _, l := range lines {
		switch {
		case bytes.Equal(l, []byte("rules:\n")):
			inRules = true
		case inRules && bytes.HasPrefix(l, []byte("- ")) && i < len(d.rules):
			for _, c := range whyLines(d.rules[i], d.grants, rel) {
				out.WriteString(c + "\n")
			}
			i++
		case !bytes.HasPrefix(l, []byte(" ")) && !bytes.HasPrefix(l, []byte("-")):
			inRules = false
		}
		out.Write(l)
	}
	return out.Bytes()
}

// whyLines are the comment lines of rule r: one per reason that gives
// some of its verbs on some of its resources, in the grants' order, the
// verbs of grants with the same reason and resources joined.
func whyLines(r rbacv1.PolicyRule, grants []grant, rel func(token.Position) string) []string {
	type line struct {
		verbs     sets.Set[string]
		resources []string
		why       string
	}
	var lines []*line
	for _, g := range grants {
		verbs := shared(r.Verbs, g.rule.Verbs)
		var what []string
		if len(r.NonResourceURLs) > 0 {
			what = sets.List(sets.New(r.NonResourceURLs...).Intersection(sets.New(g.rule.NonResourceURLs...)))
		} else if sameNames(r.ResourceNames, g.rule.ResourceNames) && len(sets.New(groups(r)...).Intersection(sets.New(groups(g.rule)...))) > 0 {
			what = sets.List(sets.New(r.Resources...).Intersection(sets.New(g.rule.Resources...)))
		}
		if len(verbs) == 0 || len(what) == 0 {
			continue
		}
		why := g.why
		if at := rel(g.pos); at != "" {
			why += " (" + at + ")"
		}
		i := slices.IndexFunc(lines, func(l *line) bool { return l.why == why && slices.Equal(l.resources, what) })
		if i < 0 {
			lines = append(lines, &line{verbs: sets.New[string](), resources: what, why: why})
			i = len(lines) - 1
		}
		lines[i].verbs.Insert(verbs...)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = rbacaudit.WhyLine(sets.List(l.verbs), l.resources, l.why)
	}
	return out
}

// shared are the verbs of g that rule verbs hold, sorted.
func shared(rule, g []string) []string {
	if slices.Contains(rule, "*") {
		return sets.List(sets.New(g...))
	}
	if slices.Contains(g, "*") {
		return sets.List(sets.New(rule...))
	}
	return sets.List(sets.New(rule...).Intersection(sets.New(g...)))
}

// groups are the API groups of r, "core" read as "".
func groups(r rbacv1.PolicyRule) []string {
	out := slices.Clone(r.APIGroups)
	for i, g := range out {
		if g == "core" {
			out[i] = ""
		}
	}
	return out
}

func sameNames(a, b []string) bool { return sets.New(a...).Equal(sets.New(b...)) }
