package markers

import (
	"errors"
	"fmt"
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

// CheckKubebuilder checks a +kubebuilder: marker line (the comment's text
// without the //): it returns "" when controller-tools knows the marker
// and its arguments parse, or the message saying what is wrong and what
// was probably meant. Markers that run registers are known too, so that
// any +kubebuilder: marker a generator of the run defines is accepted.
// Lines that end with IgnoreMarker, and other tools' markers, are not
// checked.
func CheckKubebuilder(text string, run *markers.Registry) string {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, KubebuilderPrefix) || strings.HasSuffix(text, IgnoreMarker) {
		return ""
	}
	for _, p := range otherTools {
		if strings.HasPrefix(text[1:], p) {
			return ""
		}
	}
	name, _, _ := strings.Cut(text[1:], "=")
	if strings.TrimSpace(name) != name && !strings.ContainsAny(strings.TrimSpace(name), " \t,") {
		return fmt.Sprintf("marker +%s has a space before its '=', so controller-tools would ignore it in silence: write +%s=...", strings.TrimSpace(name), strings.TrimSpace(name))
	}
	if strings.ContainsAny(name, " \t,") {
		return "" // prose that starts with a marker's name, not a marker
	}
	reg, err := kubebuilderRegistry()
	if err != nil {
		return "" // controller-tools' own registration failed; its generators report it
	}
	def := lookupAny(reg, text)
	if def == nil && run != nil {
		def = lookupAny(run, text)
	}
	if def == nil {
		return unknownKubebuilder(text, reg)
	}
	if _, err := def.Parse(text); err != nil {
		return badArgument(text, def, err)
	}
	return ""
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

func unknownKubebuilder(text string, reg *markers.Registry) string {
	full, _, _ := strings.Cut(text[1:], "=")
	// A struct marker puts its first argument's name after a colon
	// (+kubebuilder:printcolumn:name=...): try the name without it too.
	short := full
	if i := strings.LastIndex(full, ":"); i > 0 {
		short = full[:i]
	}
	best, bestDist := "", 1<<30
	for _, def := range reg.AllDefinitions() {
		for _, n := range []string{full, short} {
			if d := Distance(strings.ToLower(n), strings.ToLower(def.Name)); d < bestDist {
				best, bestDist = def.Name, d
			}
		}
	}
	msg := fmt.Sprintf("unknown marker +%s: controller-tools would ignore it in silence", full)
	if bestDist <= max(2, len(best)/5) {
		msg += fmt.Sprintf("; did you mean +%s?", best)
	}
	return msg + fmt.Sprintf(" (if another tool reads it, end the line with %q)", IgnoreMarker)
}

func badArgument(text string, def *markers.Definition, err error) string {
	msg := fmt.Sprintf("bad argument in +%s: %s", def.Name, firstProblem(err))
	if len(def.Fields) == 0 || def.AnonymousField() {
		return msg + "; `opgen generate --help` documents the marker"
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
