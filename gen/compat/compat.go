package compat

import (
	"fmt"
	"go/token"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/opgen-sdk/opgen/gen"
)

// Generator is the compatibility gate, run by opgen generate beside the
// generators: it writes nothing, and fails the run (which then writes
// nothing) on every change of a CRD that breaks the objects of the last
// release and no +opgen:compat:allow marker acknowledges.
type Generator struct {
	gen.FromCRDs
	// Baseline is what the last run compared with; nil when it found
	// none, and the gate was off.
	Baseline *Baseline
	// Off says that the last run had kinds but no baseline.
	Off bool
	// Acknowledged are the positions of the markers that acknowledged a
	// finding of the last run.
	Acknowledged []token.Position
	policy       *Policy
}

var _ gen.Generator = &Generator{}

// Generate compares the project's CRDs with the baseline (LoadBaseline)
// and reports every finding that no marker acknowledges as an error at the
// Go field or type it comes from, and markers that acknowledge nothing as
// warnings. Malformed markers are errors, baseline or not.
func (g *Generator) Generate(ctx *gen.Context) error {
	allows := newAllows(ctx)
	base, err := LoadBaseline(ctx.Project)
	if err != nil {
		ctx.Errors.AddErr(err)
		return nil
	}
	g.Baseline = base
	g.Off = base == nil && len(ctx.API.Kinds()) > 0
	if base == nil {
		return nil
	}
	policy, errs := LoadPolicy(ctx.Project)
	for _, e := range errs {
		ctx.Errors.Add(e.Pos, "%s", e.Msg)
	}
	g.policy = policy
	crds := ctx.CRDs()
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range crds {
		byName[crd.Name] = crd
	}
	loc := &locator{ctx: ctx}
	for _, r := range base.CRDs {
		crd := byName[r.CRD.Name]
		if crd == nil {
			ctx.Warnings.Add(token.Position{}, "%s: the project no longer has the kind %s (%s) of the last release: deleting its CRD from a cluster deletes every object of the kind; if that is the plan, run opgen release to record it", r.File, r.CRD.Spec.Names.Kind, r.CRD.Name)
			continue
		}
		for _, f := range append(Compare(r.CRD, crd), CompareServed(r.CRD, crd)...) {
			g.check(ctx, loc, allows, r, crd, f)
		}
	}
	for _, m := range allows.all {
		if !m.used {
			ctx.Warnings.Add(m.pos, "%s=%s acknowledges nothing: %s has no such change here; remove the marker (after opgen release, the release holds the change and the marker is done)", markerPrefix, m.rule, base.Source)
		}
	}
	return nil
}

// check reports f, as its rule's severity says, unless a marker
// acknowledges it.
func (g *Generator) check(ctx *gen.Context, loc *locator, allows *allows, r Released, crd *apiextensionsv1.CustomResourceDefinition, f Finding) {
	k := loc.kind(crd.Spec.Group, crd.Spec.Names.Kind, f.Version, storageVersion(crd))
	if k == nil {
		return // the CRD came from these kinds; nothing to place it at otherwise
	}
	var s site
	switch {
	case f.Rule == ScopeChanged || f.Rule == VersionRemoved || f.Rule == NameRuleAdded:
		s = loc.kindSite(k)
	case f.Rule == FieldRemoved:
		s = loc.removedSite(k, f.Path)
	default:
		s = loc.fieldSite(k, f.Path)
	}
	if m := allows.acknowledge(f, s); m != nil {
		if !slices.Contains(g.Acknowledged, m.pos) {
			g.Acknowledged = append(g.Acknowledged, m.pos)
		}
		return
	}
	against := "which breaks objects of the last release"
	if f.Rule == DescriptionChanged || f.Rule == ServedVersionStricter {
		against = "against the last release"
	}
	tag := "compat rule " + string(f.Rule)
	severity := g.policy.Severity(f.Rule)
	if severity != DefaultSeverity(f.Rule) {
		tag += fmt.Sprintf(", %s as %s says", severity, g.policy.File)
	}
	msg := fmt.Sprintf("%s: %s, %s (%s) [%s]: %s; %s; to break them on purpose, add // %s %s", f.Subject(), f.Change, against, r.File, tag, f.Effect, f.Fix, example(f), s.where)
	switch severity {
	case Error:
		ctx.Errors.Add(s.pos, "%s", msg)
	case Warn:
		ctx.Warnings.Add(s.pos, "%s", msg)
	}
}

// example is the marker that acknowledges f.
func example(f Finding) string {
	args := []string{markerPrefix + "=" + string(f.Rule)}
	switch f.Rule {
	case FieldRemoved:
		args = append(args, "field="+f.Name)
	case VersionRemoved:
		args = append(args, "version="+f.Name)
	}
	return strings.Join(append(args, `reason="..."`), " ")
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// Note is what the CLI prints when the gate was off: once per run that
// generated something, one line.
func (g *Generator) Note(releasedDir string) string {
	if !g.Off {
		return ""
	}
	return fmt.Sprintf("no released CRDs in %s, so the API compatibility gate is off; run opgen release when you ship, and later changes that break the objects of that release fail generation (go tool opgen help upgrading)", releasedDir)
}
