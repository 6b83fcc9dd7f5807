package k8stags

import (
	"fmt"
	"go/token"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/codetags"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Warn receives one warning of Check, at a position.
type Warn func(pos token.Position, msg string)

// Check reports through warn the +k8s: tags of pkgs that give the CRD
// nothing (at the tag's line, with Table's fix) and the fields whose +k8s:
// tag and kubebuilder marker say different things (at the field's line).
// validation-gen accepts both, so neither is an error.
func Check(collector *markers.Collector, fset *token.FileSet, pkgs []*loader.Package, warn Warn) {
	for _, pkg := range pkgs {
		pkg.NeedSyntax()
		for _, f := range pkg.Syntax {
			for _, g := range f.Comments {
				for _, l := range tagsOf(g) {
					if msg := lineWarning(l); msg != "" {
						warn(fset.Position(l.c.Pos()), msg)
					}
				}
			}
		}
		_ = markers.EachType(collector, pkg, func(info *markers.TypeInfo) {
			for _, field := range info.Fields {
				for _, msg := range conflicts(field.Markers) {
					warn(fset.Position(field.RawField.Pos()), info.Name+"."+field.Name+": "+msg)
				}
			}
		})
	}
}

// lineWarning is the warning of one tag line, or "".
func lineWarning(l line) string {
	if l.err != nil {
		name, _, _ := strings.Cut(strings.TrimPrefix(l.text, "+"), "=")
		if _, known := Lookup(strings.SplitN(name, "(", 2)[0]); !known {
			return "" // another generator's tag
		}
		return fmt.Sprintf("%s does not parse as a tag (%v), so the CRD gets nothing from it: write it as validation-gen reads it, such as +k8s:maxLength=63 or +k8s:subfield(name)=+k8s:required", l.text, l.err)
	}
	return tagWarning(l.tag, l.text)
}

// tagWarning is the warning of a parsed tag and its payloads, or "".
func tagWarning(t codetags.Tag, text string) string {
	info, known := Lookup(t.Name)
	switch {
	case !known:
		return ""
	case !info.Supported():
		return fmt.Sprintf("%s gives the CRD nothing: +%s %s", text, t.Name, info.Why)
	case t.Name == "k8s:format":
		if _, ok := formats[t.Value]; !ok {
			return fmt.Sprintf("%s gives the CRD nothing: %s", text, unsupportedFormat(t.Value))
		}
	case t.ValueTag == nil:
	case t.Name == "k8s:eachKey" || (t.Name == "k8s:subfield" && t.ValueTag.Name != "k8s:required" && t.ValueTag.Name != "k8s:forbidden"):
		if _, _, ok := (constraint{*t.ValueTag}).cel("x"); !ok {
			return fmt.Sprintf("%s gives the CRD nothing: %s", text, celWhy(*t.ValueTag))
		}
	default:
		return tagWarning(*t.ValueTag, text)
	}
	return ""
}

// bounds pair each tag that bounds a value with the kubebuilder marker
// that bounds the same, and whether a lower value is stricter.
var bounds = []struct {
	tag, marker string
	max         bool
}{
	{"k8s:minimum", "kubebuilder:validation:Minimum", false},
	{"k8s:maximum", "kubebuilder:validation:Maximum", true},
	{"k8s:minLength", "kubebuilder:validation:MinLength", false},
	{"k8s:maxLength", "kubebuilder:validation:MaxLength", true},
	{"k8s:minItems", "kubebuilder:validation:MinItems", false},
	{"k8s:maxItems", "kubebuilder:validation:MaxItems", true},
	{"k8s:minProperties", "kubebuilder:validation:MinProperties", false},
	{"k8s:maxProperties", "kubebuilder:validation:MaxProperties", true},
}

// conflicts are the differences between a field's +k8s: tags and its
// kubebuilder markers.
func conflicts(m markers.MarkerValues) []string {
	var out []string
	for _, b := range bounds {
		tag, ok := tagValue(m, b.tag)
		kb, kbOK := markerNumber(m.Get(b.marker))
		if !ok || !kbOK {
			continue
		}
		v, err := strconv.ParseFloat(tag.Value, 64)
		if err != nil || v == kb {
			continue
		}
		strict := max(v, kb)
		if b.max {
			strict = min(v, kb)
		}
		out = append(out, fmt.Sprintf("+%s=%s and +%s=%v bound it differently; the CRD holds the stricter, %v: make them agree", b.tag, tag.Value, b.marker, kb, strict))
	}
	if tag, ok := tagValue(m, "k8s:format"); ok {
		if f, isFmt := m.Get("kubebuilder:validation:Format").(crdmarkers.Format); isFmt && string(f) != tag.Value {
			out = append(out, fmt.Sprintf("+k8s:format=%s and +kubebuilder:validation:Format=%s differ; the CRD holds %s: make them agree", tag.Value, f, formatWinner(tag.Value, string(f))))
		}
	}
	required := m.Get("k8s:required") != nil
	optional := m.Get("optional") != nil || m.Get("kubebuilder:validation:Optional") != nil
	if required && optional {
		out = append(out, "+k8s:required and +optional (or +kubebuilder:validation:Optional) disagree; the CRD makes the field optional, as controller-tools reads the kubebuilder marker first: remove one")
	}
	switch {
	case m.Get("k8s:optional") == nil:
	case m.Get("kubebuilder:validation:Required") != nil:
		out = append(out, "+k8s:optional and +kubebuilder:validation:Required disagree; the CRD makes the field required, as controller-tools reads the kubebuilder marker first: remove one")
	case m.Get("required") != nil:
		out = append(out, "+k8s:optional and +required disagree; the CRD makes the field optional: remove one")
	}
	return out
}

// formatWinner is the format the CRD ends with: the tag's, applied last,
// when the CRD can check it.
func formatWinner(tag, marker string) string {
	if f, ok := formats[tag]; ok && f.format != "" {
		return tag
	}
	return marker + " and the tag's rule"
}

// tagValue is the first +k8s: tag named name in m.
func tagValue(m markers.MarkerValues, name string) (codetags.Tag, bool) {
	t, ok := m.Get(name).(Tag)
	if !ok || !t.ok {
		return codetags.Tag{}, false
	}
	return t.tag, true
}

func markerNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case crdmarkers.Minimum:
		return float64(v), true
	case crdmarkers.Maximum:
		return float64(v), true
	case crdmarkers.MinLength:
		return float64(v), true
	case crdmarkers.MaxLength:
		return float64(v), true
	case crdmarkers.MinItems:
		return float64(v), true
	case crdmarkers.MaxItems:
		return float64(v), true
	case crdmarkers.MinProperties:
		return float64(v), true
	case crdmarkers.MaxProperties:
		return float64(v), true
	}
	return 0, false
}
