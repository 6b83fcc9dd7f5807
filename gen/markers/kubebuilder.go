package markers

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"
	"sigs.k8s.io/controller-tools/pkg/schemapatcher"
	"sigs.k8s.io/controller-tools/pkg/webhook"
)

// KubebuilderPrefix starts the markers controller-tools reads.
const KubebuilderPrefix = "+kubebuilder:"

// IgnoreMarker, at the end of a marker line, turns off opgen's check of
// that one line, for a marker of another tool that shares the
// +kubebuilder: prefix:
//
//	// +kubebuilder:mytool:thing=1 // opgen:ignore-marker
const IgnoreMarker = "// opgen:ignore-marker"

// otherTools are +kubebuilder: prefixes that belong to tools other than
// controller-tools and are never typos: kubebuilder's scaffolding
// anchors and crd-ref-docs' markers.
var otherTools = []string{"kubebuilder:scaffold:", "kubebuilder:docs-gen:"}

// kubebuilderRegistry holds every marker controller-tools registers, with
// all of its generators, whichever of them opgen runs.
var kubebuilderRegistry = sync.OnceValues(func() (*markers.Registry, error) {
	reg := &markers.Registry{}
	gens := []genall.Generator{
		crd.Generator{}, rbac.Generator{}, deepcopy.Generator{},
		webhook.Generator{}, schemapatcher.Generator{},
	}
	for _, g := range gens {
		if err := g.RegisterMarkers(reg); err != nil {
			return nil, err
		}
	}
	return reg, nil
})

// Finding is what CheckKubebuilder found wrong with a marker line.
type Finding struct {
	// Msg says what is wrong and what was probably meant; "" when
	// nothing is.
	Msg string
	// Ignored is true when controller-tools ignores the line in silence
	// (an unknown marker, a space before its '='): controller-gen accepts
	// the input, so a run reports it as a warning unless it is strict.
	// A marker whose arguments do not parse fails controller-gen too.
	Ignored bool
}

// CheckKubebuilder checks a +kubebuilder: marker line (the comment's text
// without the //). Its Finding is empty when controller-tools knows the
// marker and its arguments parse. Markers that run registers are known
// too, so that any +kubebuilder: marker a generator of the run defines is
// accepted. Lines that end with IgnoreMarker, and other tools' markers,
// are not checked.
func CheckKubebuilder(text string, run *markers.Registry) Finding {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, KubebuilderPrefix) || strings.HasSuffix(text, IgnoreMarker) {
		return Finding{}
	}
	for _, p := range otherTools {
		if strings.HasPrefix(text[1:], p) {
			return Finding{}
		}
	}
	name, _, _ := strings.Cut(text[1:], "=")
	if strings.TrimSpace(name) != name && !strings.ContainsAny(strings.TrimSpace(name), " \t,") {
		name = strings.TrimSpace(name)
		return Finding{Msg: fmt.Sprintf("marker +%s has a space before its '=', so controller-tools ignores it in silence: write +%s=...", name, name), Ignored: true}
	}
	if strings.ContainsAny(name, " \t,") {
		return Finding{} // prose that starts with a marker's name, not a marker
	}
	reg, err := kubebuilderRegistry()
	if err != nil {
		return Finding{} // controller-tools' own registration failed; its generators report it
	}
	def := lookupAny(reg, text)
	if def == nil && run != nil {
		def = lookupAny(run, text)
	}
	if def == nil {
		return Finding{Msg: unknownKubebuilder(text, reg, run), Ignored: true}
	}
	if _, err := def.Parse(text); err != nil {
		return Finding{Msg: badArgument(text, def, err)}
	}
	return Finding{}
}

// lookupAny finds the definition of the marker on any target: a marker on
// the wrong kind of node is not a typo.
func lookupAny(reg *markers.Registry, text string) *markers.Definition {
	for _, target := range []markers.TargetType{markers.DescribesPackage, markers.DescribesType, markers.DescribesField} {
		if def := reg.Lookup(text, target); def != nil {
			return def
		}
	}
	return nil
}

func unknownKubebuilder(text string, regs ...*markers.Registry) string {
	full, _, _ := strings.Cut(text[1:], "=")
	msg := fmt.Sprintf("unknown marker +%s: controller-tools ignores it in silence", full)
	if best := Suggest(full, definitionNames(regs...)); best != "" {
		msg += fmt.Sprintf("; did you mean +%s?", best)
	}
	return msg + fmt.Sprintf(" (if another tool reads it, end the line with %q)", IgnoreMarker)
}

// definitionNames are the names of the markers of regs, sorted, each once.
func definitionNames(regs ...*markers.Registry) []string {
	var out []string
	for _, reg := range regs {
		if reg == nil {
			continue
		}
		for _, def := range reg.AllDefinitions() {
			out = append(out, def.Name)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Suggest returns the marker of names that an unknown marker name most
// probably meant, or "". The same input always gives the same
// answer. In order:
//
//  1. the same name in other case (validation:optional is
//     validation:Optional: controller-tools' names are case-sensitive);
//  2. a marker named like the unknown one's last element, when known
//     markers share its prefix (kubebuilder:validation:nullable is
//     +nullable);
//  3. the closest name by edit distance, when the distance is small for
//     the whole name (at most 2) or for its last element among markers
//     with the same prefix (at most a third of it). Ties go to the first
//     name in order.
//
// A struct marker puts its first argument's name after a colon
// (+kubebuilder:printcolumn:name=...), so the name without its last
// element is tried too.
func Suggest(name string, names []string) string {
	names = slices.Sorted(slices.Values(names))
	lower := strings.ToLower(name)
	for _, n := range names {
		if strings.ToLower(n) == lower {
			return n
		}
	}
	if prefix, last, ok := cutLast(lower); ok && hasPrefix(names, prefix+":") {
		for _, n := range names {
			if strings.ToLower(n) == last {
				return n
			}
		}
	}
	forms := []string{lower}
	if short, _, ok := cutLast(lower); ok {
		forms = append(forms, short)
	}
	best, bestDist := "", 1<<30
	for _, n := range names {
		ln := strings.ToLower(n)
		for _, f := range forms {
			if d, ok := near(f, ln); ok && d < bestDist {
				best, bestDist = n, d
			}
		}
	}
	return best
}

// near returns the edit distance of two lower-case marker names and
// whether it is small enough to suggest one for the other.
func near(a, b string) (int, bool) {
	d := Distance(a, b)
	if d <= 2 {
		return d, true
	}
	pa, la, oka := cutLast(a)
	pb, lb, okb := cutLast(b)
	if !oka || !okb || pa != pb {
		return d, false
	}
	ld := Distance(la, lb)
	return d, ld <= max(1, len(lb)/3)
}

// hasPrefix reports whether a name of names starts with prefix, ignoring
// case.
func hasPrefix(names []string, prefix string) bool {
	for _, n := range names {
		if strings.HasPrefix(strings.ToLower(n), prefix) {
			return true
		}
	}
	return false
}

// cutLast splits a marker name at its last colon.
func cutLast(name string) (prefix, last string, ok bool) {
	i := strings.LastIndex(name, ":")
	if i <= 0 {
		return name, "", false
	}
	return name[:i], name[i+1:], true
}

func badArgument(text string, def *markers.Definition, err error) string {
	msg := fmt.Sprintf("bad argument in +%s: %s", def.Name, firstProblem(err))
	if len(def.Fields) == 0 || def.AnonymousField() {
		return msg + "; `opgen help markers` documents the marker"
	}
	args := make([]string, 0, len(def.Fields))
	for name := range def.Fields {
		args = append(args, name)
	}
	sort.Strings(args)
	if name, ok := unknownArgument(text, def); ok {
		if best := closest(name, args); best != "" {
			msg += fmt.Sprintf("; did you mean %s?", best)
		}
	}
	return msg + fmt.Sprintf(" (arguments: %s)", strings.Join(args, ", "))
}

// unknownArgument returns the first argument name in text that def does
// not have.
func unknownArgument(text string, def *markers.Definition) (string, bool) {
	anon, rest, _ := strings.Cut(text[1:], "=")
	first := strings.TrimPrefix(anon, def.Name+":")
	parts := []string{first + "=" + rest}
	if first == anon {
		parts = []string{rest}
	}
	for _, part := range strings.Split(strings.Join(parts, ""), ",") {
		name, _, found := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if _, ok := def.Fields[name]; found && !ok && name != "" && isArgName(name) {
			return name, true
		}
	}
	return "", false
}

func isArgName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func closest(name string, candidates []string) string {
	best, bestDist := "", 1<<30
	for _, c := range candidates {
		if d := Distance(strings.ToLower(name), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist <= max(2, len(best)/3) {
		return best
	}
	return ""
}

// firstProblem is the first of the parser's errors, without the scanner's
// position inside the marker, which the error's own position replaces.
func firstProblem(err error) string {
	for {
		list, ok := err.(loader.ErrList)
		if !ok || len(list) == 0 {
			break
		}
		err = list[0]
	}
	var se *markers.ScannerError
	if errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

// CheckOwnsList returns the message for a +opgen:controller:owns marker
// that separates its kinds with commas, which the marker parser reads as
// extra arguments, or "".
func CheckOwnsList(text string) string {
	name, value, ok := strings.Cut(strings.TrimSpace(text), "=")
	if !ok || name != "+opgen:controller:owns" || strings.HasPrefix(value, `"`) || !strings.Contains(value, ",") {
		return ""
	}
	return fmt.Sprintf("+opgen:controller:owns separates kinds with ';', not ',': write +opgen:controller:owns=%s", strings.ReplaceAll(value, ",", ";"))
}
