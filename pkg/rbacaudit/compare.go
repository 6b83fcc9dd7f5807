package rbacaudit

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Report is what Compare found.
type Report struct {
	// User is the audited ServiceAccount's user name.
	User string
	// Requests counts the user's requests; Distinct the different ones.
	Requests, Distinct int
	// All are the user's requests, as ReadLog gives them.
	All []Request
	// Missing are the requests no grant allows, one per verb and
	// resource, with the counts summed and the first namespace and name.
	Missing []Request
	// Unused are the audited grants (config/rbac) that allowed no request.
	Unused []Grant
	// Audited counts the audited grants.
	Audited int
}

// Compare reports which requests the roles would forbid and which of
// their audited grants no request used.
func Compare(roles *Roles, requests []Request) *Report {
	rep := &Report{User: roles.User, Distinct: len(requests), All: requests}
	used := make([]bool, len(roles.Grants))
	missing := map[string]*Request{}
	var order []string
	for _, r := range requests {
		rep.Requests += r.Count
		allowed := slices.ContainsFunc(everyone, func(g Grant) bool { return g.allows(r) })
		for i, g := range roles.Grants {
			if g.allows(r) {
				used[i], allowed = true, true
			}
		}
		if allowed {
			continue
		}
		k := r.Verb + " " + r.Key()
		if m, ok := missing[k]; ok {
			m.Count += r.Count
			m.Forbidden += r.Forbidden
			continue
		}
		r := r
		missing[k] = &r
		order = append(order, k)
	}
	for _, k := range order {
		rep.Missing = append(rep.Missing, *missing[k])
	}
	for i, g := range roles.Grants {
		if !g.Audited {
			continue
		}
		rep.Audited++
		if !used[i] {
			rep.Unused = append(rep.Unused, g)
		}
	}
	return rep
}

// allows reports whether g allows r, as the RBAC authorizer matches a rule
// (k8s.io/component-helpers/auth/rbac/validation).
func (g Grant) allows(r Request) bool {
	if g.Verb != "*" && g.Verb != r.Verb {
		return false
	}
	if r.URL != "" {
		return g.URL == r.URL || (strings.HasSuffix(g.URL, "*") && strings.HasPrefix(r.URL, strings.TrimSuffix(g.URL, "*")))
	}
	if g.URL != "" || (g.Group != "*" && g.Group != r.Group) || !resourceMatches(g.Resource, r.Resource) {
		return false
	}
	if g.Namespace != "" && g.Namespace != r.Namespace {
		return false
	}
	return len(g.Names) == 0 || slices.Contains(g.Names, r.Name)
}

// resourceMatches matches a rule's resource to a request's
// resource[/subresource]: "*", equal, or "*/<subresource>".
func resourceMatches(rule, resource string) bool {
	if rule == "*" || rule == resource {
		return true
	}
	_, sub, ok := strings.Cut(resource, "/")
	return ok && rule == "*/"+sub
}

// Failed reports whether any request is missing.
func (r *Report) Failed() bool { return len(r.Missing) > 0 }

// WriteTo writes the report for a reader: the missing requests, then the
// unused grants by role and reason.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d requests, %d distinct\n", r.User, r.Requests, r.Distinct)
	fmt.Fprintf(&b, "missing (the generated roles would forbid them): %d\n", len(r.Missing))
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "  %s %s: %d requests, %d forbidden%s\n", m.Verb, m.Key(), m.Count, m.Forbidden, example(m))
	}
	fmt.Fprintf(&b, "unused (granted, never requested): %d of %d granted verbs\n", len(r.Unused), r.Audited)
	for _, l := range unusedLines(r.Unused) {
		b.WriteString(l + "\n")
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func example(m Request) string {
	switch {
	case m.Namespace != "" && m.Name != "":
		return ", e.g. " + m.Namespace + "/" + m.Name
	case m.Name != "":
		return ", e.g. " + m.Name
	case m.Namespace != "":
		return ", e.g. in " + m.Namespace
	}
	return ""
}

// unusedLines groups unused grants by role, then by reason: the verbs
// unused on each resource.
func unusedLines(unused []Grant) []string {
	type key struct{ role, why, resource string }
	verbs := map[key][]string{}
	var keys []key
	for _, g := range unused {
		whys := g.Why
		if len(whys) == 0 {
			whys = []string{"(no comment in config/rbac says why: run `go generate ./...`)"}
		}
		for _, why := range whys {
			k := key{g.Role, why, g.Key()}
			if _, ok := verbs[k]; !ok {
				keys = append(keys, k)
			}
			verbs[k] = append(verbs[k], g.Verb)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].role != keys[j].role {
			return keys[i].role < keys[j].role
		}
		return keys[i].resource < keys[j].resource
	})
	var out []string
	role := ""
	for _, k := range keys {
		if k.role != role {
			role = k.role
			out = append(out, "  "+role)
		}
		v := verbs[k]
		sort.Strings(v)
		out = append(out, fmt.Sprintf("    %s on %s: %s", strings.Join(v, ", "), k.resource, k.why))
	}
	return out
}
