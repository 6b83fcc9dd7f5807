package rbac

import (
	"encoding/json"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-tools/pkg/markers"
	ctrbac "sigs.k8s.io/controller-tools/pkg/rbac"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen"
	opgenmarkers "github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/gen/model"
	"github.com/opgen-sdk/opgen/internal/migrationrules"
	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// File names under the RBAC directory.
const (
	RoleFile           = "role.yaml"
	LeaderElectionFile = "leader_election_role.yaml"
)

// Generator writes the operator's ClusterRole and leader-election Role.
// The zero value writes opgen's own layout. Adopted writes the RBAC of a
// project adopted from kubebuilder instead (see adopted.go).
type Generator struct {
	// RoleName names the ClusterRole, and the Roles of +kubebuilder:rbac
	// markers with a namespace and no roleName. Default: <name>-manager.
	RoleName string
	// Adopted merges the rules as controller-gen's rbac generator does, so
	// that a project whose RBAC comes from markers alone gets
	// controller-gen's role.yaml, and writes no leader-election Role: the
	// controller-runtime manager that hosts the operator holds the one
	// Lease, with the Role kubebuilder scaffolded for it.
	Adopted bool
}

var _ gen.Generator = Generator{}

// RegisterMarkers registers +kubebuilder:rbac.
func (Generator) RegisterMarkers(into *markers.Registry) error {
	return ctrbac.Generator{}.RegisterMarkers(into)
}

// Generate writes the roles, or removes stale ones when nothing needs
// them. In opgen's layout each rule carries comments that say what asks
// for it (why.go), which `opgen rbac audit` reads.
func (g Generator) Generate(ctx *gen.Context) error {
	dir := ctx.Project.Abs(ctx.Project.RBACDir)
	ctx.Output.Own(filepath.Join(dir, RoleFile))
	ctx.Output.Own(filepath.Join(dir, LeaderElectionFile))
	manager := roleKey{name: orDefault(g.RoleName, ctx.Project.Name+"-manager")}
	roles := map[roleKey][]grant{manager: derived(ctx.API, ctx.DocMarker, handlerDeletes(ctx))}
	for _, root := range ctx.Roots {
		pm, err := markers.PackageMarkers(ctx.Collector, root)
		if err != nil {
			continue // reported with the package's errors
		}
		lines := rbacMarkerLines(ctx.Fset, root)
		for _, v := range pm[ctrbac.RuleDefinition.Name] {
			m := v.(ctrbac.Rule)
			k := roleKey{namespace: m.Namespace, name: orDefault(m.RoleName, manager.name)}
			roles[k] = append(roles[k], lines.grant(m))
		}
	}
	merge := mergeRules
	if g.Adopted {
		merge = mergeAsControllerGen
	}
	rel := func(p token.Position) string { return relative(ctx.Project.Root, p) }
	if docs := documents(roles, merge); len(docs) > 0 {
		data, err := marshal(docs, !g.Adopted, rel)
		if err != nil {
			return err
		}
		ctx.Output.YAML(filepath.Join(dir, RoleFile), data)
	}
	if ctx.API.HasControllers() && !g.Adopted {
		role := LeaderElectionRole(ctx.Project.Name + "-leader-election")
		data, err := marshal([]document{{obj: role, rules: role.Rules, grants: leaderElectionGrants()}}, true, rel)
		if err != nil {
			return err
		}
		ctx.Output.YAML(filepath.Join(dir, LeaderElectionFile), data)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Derived returns the rules the runtime needs for the controllers of api,
// granting patch on each custom kind as if its handler had Delete.
func Derived(api *model.API) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, g := range derived(api, nil, nil) {
		rules = append(rules, g.rule)
	}
	return rules
}

// derived returns the rules the runtime needs for the controllers of api,
// each with what asks for it; at finds a marker's line (nil: the kind's),
// deletes says whether a kind's handler may have Delete (nil: it may).
func derived(api *model.API, at locate, deletes func(*model.Kind) bool) []grant {
	var out []grant
	for _, k := range api.Controllers() {
		g, w := k.Version.Group.Name, whyKind{at: at, decl: k.Pos, on: k.Name}
		out = append(out, cached(w, "+opgen:controller", "the controller's", g, k.Plural)...)
		if deletes == nil || deletes(k) {
			out = append(out, w.grant("+opgen:controller", "the finalizer of its handler's Delete, added and removed with server-side apply", rule(g, k.Plural, "patch")))
		}
		out = append(out, w.grant("+opgen:controller", "the ApplyStatus step applies the status", rule(g, k.Plural+"/status", "patch")))
		if len(k.Controller.Owns) > 0 {
			out = append(out, w.grant("+opgen:controller", blockOwnerDeletion, rule(g, k.Plural+"/finalizers", "update")))
		}
		out = append(out, owned(api, w, k.Controller, k.DeletesNow)...)
		out = append(out, related(api, w, k.Controller)...)
		for _, r := range migration(k) {
			why := "the leader's storage migration of " + k.Plural + "." + g
			if slices.Contains(r.Verbs, "watch") {
				why += ": its CRD's stored versions (list: " + listFallback + ")"
			} else {
				why += ", once its objects must move to a new storage version"
			}
			out = append(out, w.grant("+opgen:controller", why, r))
		}
	}
	for _, h := range api.BuiltinControllers {
		out = append(out, handlerRules(api, h, whyKind{at: at, decl: h.Pos, on: h.Name})...)
	}
	if api.HasControllers() {
		out = append(out,
			grant{rule: rule("events.k8s.io", "events", "create"), why: "the runtime's Kubernetes Events, of every controller"},
			grant{rule: rule("events.k8s.io", "events", "patch"), why: "the count of an Event that repeats (its series), of every controller"})
	}
	return out
}

// Why the runtime needs verbs it may never use in a short run.
const (
	listFallback       = "an informer's initial list, where the API server cannot stream it in the watch"
	getNoMore          = "reading one object, no more than list grants"
	blockOwnerDeletion = "blockOwnerDeletion on owned objects, which the OwnerReferencesPermissionEnforcement admission checks as this verb"
)

// cached are the grants of an informer of group/resource: watch, list
// (listFallback) and get (getNoMore), for whose (the controller's, the
// Reader's).
func cached(w whyKind, marker, whose, group, resource string) []grant {
	return []grant{
		w.grant(marker, whose+" cache (watch)", rule(group, resource, "watch")),
		w.grant(marker, listFallback, rule(group, resource, "list")),
		w.grant(marker, getNoMore, rule(group, resource, "get")),
	}
}

// migration are the rules of the leader's storage migration of k.
func migration(k *model.Kind) []rbacv1.PolicyRule {
	return MigrationRules(k.Version.Group.Name, k.Plural, versionsOf(k) > 1)
}

// MigrationRules are the rules of the leader's storage migration of the
// custom resource plural.group (pkg/runtime); versions when the kind is
// served in several versions. The runtime's migration tests run under
// these rules alone.
func MigrationRules(group, plural string, versions bool) []rbacv1.PolicyRule {
	return migrationrules.For(group, plural, versions)
}

// versionsOf counts the versions of k's group that have the kind.
func versionsOf(k *model.Kind) int {
	n := 0
	for _, v := range k.Version.Group.Versions {
		for _, other := range v.Kinds {
			if other.Name == k.Name {
				n++
			}
		}
	}
	return n
}

// handlerRules are the rules of the controller of a built-in kind: it
// watches the kind, writes a finalizer only when it has Delete, and the
// status never (the cluster writes it).
func handlerRules(api *model.API, h *model.BuiltinController, w whyKind) []grant {
	g, res := h.Kind.Group, h.Kind.Resource
	for_ := "+opgen:controller:for=" + kindRef(h.GVK())
	rules := cached(w, for_, "the handler's", g, res)
	if h.Deletes() {
		rules = append(rules, w.grant(for_, "the finalizer of its Delete, added and removed with server-side apply", rule(g, res, "patch")))
	}
	if len(h.Controller.Owns) > 0 {
		rules = append(rules, w.grant(for_, blockOwnerDeletion, rule(g, res+"/finalizers", "update")))
	}
	rules = append(rules, owned(api, w, h.Controller, h.DeletesNow)...)
	return append(rules, related(api, w, h.Controller)...)
}

// related are the rules for the kinds a controller reads from its caches
// (+opgen:controller:reads: get, list and watch, as its informers and
// Reader.Get need) and watches through a mapping function
// (+opgen:controller:watches: list and watch, metadata only).
func related(api *model.API, w whyKind, spec *opgenmarkers.ControllerSpec) []grant {
	var rules []grant
	for _, gvk := range spec.Reads {
		rules = append(rules, cached(w, "+opgen:controller:reads="+kindRef(gvk), "the handler's Reader's", gvk.Group, api.Resource(gvk))...)
	}
	for _, wt := range spec.Watches {
		marker, res := "+opgen:controller:watches="+kindRef(wt.Kind), api.Resource(wt.Kind)
		rules = append(rules,
			w.grant(marker, "a metadata-only watch that wakes "+w.on+" objects", rule(wt.Kind.Group, res, "watch")),
			w.grant(marker, listFallback, rule(wt.Kind.Group, res, "list")))
	}
	return rules
}

// owned are the rules for descendants of the owned kinds: applied and
// pruned, or of a retained kind applied only, with delete only when the
// handler deletes children itself (deletesNow: it calls plug.DeleteNow).
func owned(api *model.API, w whyKind, spec *opgenmarkers.ControllerSpec, deletesNow bool) []grant {
	var rules []grant
	for _, o := range spec.Owns {
		marker, g, res := "+opgen:controller:owns="+kindRef(o), o.Group, api.Resource(o)
		verbs := []string{"get", "list", "watch", "create", "patch", "delete"}
		if slices.Contains(spec.Retain, o) && !deletesNow {
			verbs = verbs[:5]
		}
		rules = append(rules, cached(w, marker, "the owned objects'", g, res)...)
		rules = append(rules,
			w.grant(marker, "server-side apply of the owned objects", rule(g, res, "patch")),
			w.grant(marker, "a server-side apply that creates an owned object (authorized as a create)", rule(g, res, "create")))
		switch {
		case !slices.Contains(verbs, "delete"):
		case slices.Contains(spec.Retain, o):
			rules = append(rules, w.grant(marker, "the handler's plug.DeleteNow of a retained (+opgen:controller:retain) owned object", rule(g, res, "delete")))
		default:
			rules = append(rules, w.grant(marker, "pruning an owned object the handler no longer declares", rule(g, res, "delete")))
		}
	}
	return rules
}

// LeaderElectionRole is the Role the runtime's leader election needs, to
// be bound in the operator's namespace; list and delete are the
// sharder's, which watches the member Leases of sharding
// (runtime.Options.Sharding) and deletes those of members gone for good.
func LeaderElectionRole(name string) rbacv1.Role {
	return rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{rule("coordination.k8s.io", "leases", "create", "delete", "get", "list", "update", "watch")},
	}
}

// MetricsAuthRules are manifest.MetricsAuthRules, which new code calls:
// the rules live with the manifest that binds them, which pkg/optest uses
// without the generator. This forwarder goes with its last caller.
func MetricsAuthRules() []rbacv1.PolicyRule { return manifest.MetricsAuthRules() }

// MetricsReaderRole is manifest.MetricsReaderRole, which new code calls.
func MetricsReaderRole(name string) rbacv1.ClusterRole { return manifest.MetricsReaderRole(name) }

func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

func fromMarker(m ctrbac.Rule) rbacv1.PolicyRule {
	groups := slices.Clone(m.Groups)
	for i, g := range groups {
		if g == "core" {
			groups[i] = ""
		}
	}
	return rbacv1.PolicyRule{APIGroups: groups, Resources: m.Resources, ResourceNames: m.ResourceNames, NonResourceURLs: m.URLs, Verbs: m.Verbs}
}

// roleKey names one role: a ClusterRole without namespace, a Role with.
type roleKey struct{ namespace, name string }

// atom is one (group, resource, resource names) or one URL.
type atom struct{ group, resource, names, url string }

// ruleSet merges rules into verbs per atom.
type ruleSet struct{ verbs map[atom]sets.Set[string] }

func (s *ruleSet) add(r rbacv1.PolicyRule) {
	if s.verbs == nil {
		s.verbs = map[atom]sets.Set[string]{}
	}
	names := strings.Join(sets.List(sets.New(r.ResourceNames...)), ",")
	var atoms []atom
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			atoms = append(atoms, atom{group: g, resource: res, names: names})
		}
	}
	for _, u := range r.NonResourceURLs {
		atoms = append(atoms, atom{url: u})
	}
	for _, a := range atoms {
		if s.verbs[a] == nil {
			s.verbs[a] = sets.New[string]()
		}
		s.verbs[a].Insert(r.Verbs...)
	}
}

// rules returns the merged, sorted policy rules.
func (s *ruleSet) rules() []rbacv1.PolicyRule {
	type shape struct{ group, names, verbs string }
	resources := map[shape][]string{}
	urls := map[string][]string{}
	for a, v := range s.verbs {
		verbs := sets.List(v)
		if v.Has("*") {
			verbs = []string{"*"}
		}
		joined := strings.Join(verbs, ",")
		if a.url != "" {
			urls[joined] = append(urls[joined], a.url)
			continue
		}
		k := shape{a.group, a.names, joined}
		resources[k] = append(resources[k], a.resource)
	}
	var out []rbacv1.PolicyRule
	for k, res := range resources {
		sort.Strings(res)
		r := rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: res, Verbs: strings.Split(k.verbs, ",")}
		if k.names != "" {
			r.ResourceNames = strings.Split(k.names, ",")
		}
		out = append(out, r)
	}
	for verbs, u := range urls {
		sort.Strings(u)
		out = append(out, rbacv1.PolicyRule{NonResourceURLs: u, Verbs: strings.Split(verbs, ",")})
	}
	sort.Slice(out, func(i, j int) bool { return ruleKey(out[i]) < ruleKey(out[j]) })
	return out
}

func ruleKey(r rbacv1.PolicyRule) string {
	return fmt.Sprintf("%q %q %q %q %q", r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs, r.Verbs)
}

// mergeRules merges rules as opgen does (see Determinism in the package
// documentation).
func mergeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var s ruleSet
	for _, r := range rules {
		s.add(r)
	}
	return s.rules()
}

// document is one role of role.yaml: the object, its merged rules and
// the grants they came from.
type document struct {
	obj    any
	rules  []rbacv1.PolicyRule
	grants []grant
}

// documents returns the ClusterRoles, then the Roles, sorted by namespace
// and name, each with its rules merged by merge.
func documents(roles map[roleKey][]grant, merge func([]rbacv1.PolicyRule) []rbacv1.PolicyRule) []document {
	keys := make([]roleKey, 0, len(roles))
	for k := range roles {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].namespace != keys[j].namespace {
			return keys[i].namespace < keys[j].namespace
		}
		return keys[i].name < keys[j].name
	})
	var docs []document
	for _, k := range keys {
		var rules []rbacv1.PolicyRule
		for _, g := range roles[k] {
			rules = append(rules, g.rule)
		}
		rules = merge(rules)
		if len(rules) == 0 {
			continue
		}
		doc := document{rules: rules, grants: roles[k]}
		if k.namespace == "" {
			doc.obj = rbacv1.ClusterRole{
				TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{Name: k.name},
				Rules:      rules,
			}
		} else {
			doc.obj = rbacv1.Role{
				TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: k.name, Namespace: k.namespace},
				Rules:      rules,
			}
		}
		docs = append(docs, doc)
	}
	return docs
}

// marshal writes docs as a YAML stream without empty metadata fields;
// with why, each rule is preceded by the comments that say what asks for
// it (why.go), positions written by rel.
func marshal(docs []document, why bool, rel func(token.Position) string) ([]byte, error) {
	var out []byte
	for _, d := range docs {
		j, err := json.Marshal(d.obj)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return nil, err
		}
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		y, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		if why {
			y = annotate(y, d, rel)
		}
		out = append(append(out, "---\n"...), y...)
	}
	return out, nil
}
