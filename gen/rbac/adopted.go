package rbac

import (
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// A project adopted from kubebuilder keeps the ClusterRole controller-gen
// wrote for it. Its rules are merged here the way controller-gen's rbac
// generator (controller-tools v0.23) merges them, so that the same markers
// give the same role.yaml, rule for rule and in the same order. opgen's
// own merge (ruleSet) groups differently, and would rewrite every rule of
// the project on its first run.
//
// controller-gen's steps: split each rule into one rule per resource; join
// rules of the same groups, resource, names and URLs by their verbs; then
// join resources, then groups, then URLs of rules that agree on the rest;
// sort by the groups, resources, names and URLs, each joined by "&".

// ctRule is a rule as controller-gen holds it while merging.
type ctRule struct{ groups, resources, names, urls, verbs []string }

// key is controller-gen's ruleKey, as its String method spells it.
func (r *ctRule) key() string {
	return join(r.groups, r.resources, r.names, r.urls)
}

func join(fields ...[]string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = strings.Join(f, "&")
	}
	return strings.Join(parts, " + ")
}

// normalize sorts every field and removes duplicates.
func (r *ctRule) normalize() {
	for _, f := range []*[]string{&r.groups, &r.resources, &r.names, &r.urls, &r.verbs} {
		*f = sortedSet(*f)
	}
}

func sortedSet(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// mergeAsControllerGen merges rules as controller-gen does.
func mergeAsControllerGen(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	byKey := map[string]*ctRule{}
	for _, r := range splitByResource(rules) {
		r.normalize()
		if prev, ok := byKey[r.key()]; ok {
			prev.verbs = sortedSet(append(prev.verbs, r.verbs...))
			continue
		}
		byKey[r.key()] = r
	}
	byKey = joinOn(byKey, func(r *ctRule) *[]string { return &r.resources })
	byKey = joinOn(byKey, func(r *ctRule) *[]string { return &r.groups })
	byKey = joinOn(byKey, func(r *ctRule) *[]string { return &r.urls })
	out := make([]rbacv1.PolicyRule, 0, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		r := byKey[k]
		if slices.Contains(r.verbs, "*") {
			r.verbs = []string{"*"}
		}
		out = append(out, rbacv1.PolicyRule{APIGroups: r.groups, Resources: r.resources, ResourceNames: r.names, NonResourceURLs: r.urls, Verbs: r.verbs})
	}
	return out
}

// splitByResource makes one rule per resource, as controller-gen reads a
// marker; a rule without resources (non-resource URLs) stays whole.
func splitByResource(rules []rbacv1.PolicyRule) []*ctRule {
	var out []*ctRule
	for _, r := range rules {
		groups := slices.Clone(r.APIGroups)
		for i, g := range groups {
			if g == "core" {
				groups[i] = ""
			}
		}
		if len(r.Resources) == 0 {
			out = append(out, &ctRule{groups: groups, names: r.ResourceNames, urls: r.NonResourceURLs, verbs: r.Verbs})
			continue
		}
		for _, res := range r.Resources {
			out = append(out, &ctRule{groups: groups, resources: []string{res}, names: r.ResourceNames, urls: r.NonResourceURLs, verbs: r.Verbs})
		}
	}
	return out
}

// joinOn joins the field of the rules that agree on everything else,
// verbs included, and keys the result again.
func joinOn(byKey map[string]*ctRule, field func(*ctRule) *[]string) map[string]*ctRule {
	groups := map[string][]*ctRule{}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		r := byKey[k]
		saved := *field(r)
		*field(r) = nil
		rest := join(r.groups, r.resources, r.names, r.urls, r.verbs)
		*field(r) = saved
		groups[rest] = append(groups[rest], r)
	}
	out := make(map[string]*ctRule, len(groups))
	for _, rs := range groups {
		first := rs[0]
		for _, r := range rs[1:] {
			*field(first) = append(*field(first), *field(r)...)
		}
		first.normalize()
		// Rules that came out the same but for their verbs grant the
		// union. controller-gen keeps one of them, whichever its map
		// gives last, and drops the other's verbs.
		if prev, dup := out[first.key()]; dup {
			first.verbs = sortedSet(append(first.verbs, prev.verbs...))
		}
		out[first.key()] = first
	}
	return out
}
