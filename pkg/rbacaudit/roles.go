package rbacaudit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// Options name the operator whose roles ReadRoles reads.
type Options struct {
	// Name is the operator's name, as in its generated RBAC.
	Name string
	// Namespace holds its ServiceAccount. Default: Name + "-system".
	Namespace string
	// ServiceAccount the operator runs as. Default: Name.
	ServiceAccount string
	// ConfigDir holds crd/ and rbac/ as opgen generate wrote them.
	// Default: "config".
	ConfigDir string
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = o.Name + "-system"
	}
	if o.ServiceAccount == "" {
		o.ServiceAccount = o.Name
	}
	if o.ConfigDir == "" {
		o.ConfigDir = "config"
	}
}

// User is the name the API server knows the operator's ServiceAccount by.
func (o Options) User() string {
	o.defaults()
	return "system:serviceaccount:" + o.Namespace + ":" + o.ServiceAccount
}

// Grant is one verb on one resource (or non-resource URL) that a role
// bound to the operator holds, and what asks for it.
type Grant struct {
	// Role is the role's kind and name: ClusterRole/hello-operator-manager.
	Role string
	// Namespace is where the grant applies: a Role's namespace, or "" for
	// every namespace.
	Namespace string
	// Group and Resource (with its subresource: greetings/status) that
	// the grant is on, and the names it is narrowed to, if any.
	Group, Resource string
	Names           []string
	// URL is the non-resource URL of the grant, or "".
	URL  string
	Verb string
	// Why is what asks for the grant: the comments of config/rbac, or
	// the manifest's own roles.
	Why []string
	// Audited says the grant comes from config/rbac, which opgen generate
	// derives from the project: Compare lists it when unused.
	Audited bool
}

// Key writes the resource of g as `kubectl get` takes it:
// deployments.apps, greetings.hello.example.com/status, or the URL.
func (g Grant) Key() string {
	if g.URL != "" {
		return g.URL
	}
	return resourceKey(g.Group, g.Resource)
}

func resourceKey(group, resource string) string {
	if group == "" {
		return resource
	}
	base, sub, ok := strings.Cut(resource, "/")
	if ok {
		return base + "." + group + "/" + sub
	}
	return resource + "." + group
}

// Roles are the grants of every role bound to one ServiceAccount.
type Roles struct {
	// User is the ServiceAccount's user name.
	User   string
	Grants []Grant
}

// ReadRoles reads the roles that the manifest of opts binds to the
// operator's ServiceAccount (manifest.Build, without a Deployment, as
// optest installs it), with the comments of config/rbac that say what asks
// for each rule.
func ReadRoles(opts Options) (*Roles, error) {
	opts.defaults()
	data, err := manifest.Build(manifest.Options{Name: opts.Name, Namespace: opts.Namespace, ServiceAccount: opts.ServiceAccount, ConfigDir: opts.ConfigDir})
	if err != nil {
		return nil, err
	}
	whys, err := readWhys(filepath.Join(opts.ConfigDir, "rbac"))
	if err != nil {
		return nil, err
	}
	objs, err := decodeRBAC(data)
	if err != nil {
		return nil, fmt.Errorf("rbacaudit: the manifest of %s: %w", opts.Name, err)
	}
	roles := &Roles{User: opts.User()}
	for _, b := range objs.bindings {
		if !slices.ContainsFunc(b.subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == opts.ServiceAccount && s.Namespace == opts.Namespace
		}) {
			continue
		}
		role, ok := objs.roles[b.ref]
		if !ok {
			continue // a role of the cluster's own, such as a default one
		}
		rw, audited := whys[roleID{kind: role.kind, name: role.name}]
		for i, r := range role.rules {
			var rwhy []why
			if audited && i < len(rw) {
				rwhy = rw[i]
			}
			roles.Grants = append(roles.Grants, expand(role.kind+"/"+role.name, b.namespace, r, rwhy, audited)...)
		}
	}
	return roles, nil
}

// expand makes the grants of rule r of role, applied in namespace ("" for
// all), with the whys of its comments.
func expand(role, namespace string, r rbacv1.PolicyRule, whys []why, audited bool) []Grant {
	var out []Grant
	add := func(g Grant, key string) {
		g.Role, g.Namespace, g.Audited = role, namespace, audited
		for _, w := range whys {
			if w.covers(g.Verb, key) {
				g.Why = append(g.Why, w.text)
			}
		}
		if !audited {
			g.Why = []string{"written by opgen manifests (" + role + ")"}
		}
		out = append(out, g)
	}
	for _, v := range r.Verbs {
		for _, u := range r.NonResourceURLs {
			add(Grant{URL: u, Verb: v}, u)
		}
		for _, grp := range r.APIGroups {
			for _, res := range r.Resources {
				add(Grant{Group: grp, Resource: res, Names: r.ResourceNames, Verb: v}, res)
			}
		}
	}
	return out
}

// roleID names a role of the manifest: its kind and name (a Role's
// namespace is the operator's).
type roleID struct{ kind, name string }

type role struct {
	kind, name string
	rules      []rbacv1.PolicyRule
}

type binding struct {
	ref       roleID
	namespace string // of a RoleBinding; "" for a ClusterRoleBinding
	subjects  []rbacv1.Subject
}

type rbacObjects struct {
	roles    map[roleID]role
	bindings []binding
}

// decodeRBAC reads the roles and bindings of a YAML stream.
func decodeRBAC(data []byte) (*rbacObjects, error) {
	out := &rbacObjects{roles: map[roleID]role{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Rules    []rbacv1.PolicyRule `json:"rules"`
			RoleRef  rbacv1.RoleRef      `json:"roleRef"`
			Subjects []rbacv1.Subject    `json:"subjects"`
		}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		switch obj.Kind {
		case "ClusterRole", "Role":
			out.roles[roleID{obj.Kind, obj.Metadata.Name}] = role{kind: obj.Kind, name: obj.Metadata.Name, rules: obj.Rules}
		case "ClusterRoleBinding", "RoleBinding":
			ns := obj.Metadata.Namespace
			if obj.Kind == "ClusterRoleBinding" {
				ns = ""
			}
			out.bindings = append(out.bindings, binding{ref: roleID{obj.RoleRef.Kind, obj.RoleRef.Name}, namespace: ns, subjects: obj.Subjects})
		}
	}
}

// readWhys reads the WhyLine comments of the roles opgen generate wrote
// in dir, by role and rule.
func readWhys(dir string) (map[roleID][][]why, error) {
	out := map[roleID][][]why{}
	for _, file := range []string{"role.yaml", "leader_election_role.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := whysOf(data, out); err != nil {
			return nil, fmt.Errorf("rbacaudit: %s: %w; run `go generate ./...` to write it again", filepath.Join(dir, file), err)
		}
	}
	return out, nil
}

// whysOf adds the comments of each rule of the roles in data to out.
func whysOf(data []byte, out map[roleID][][]why) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		kind, name := field(m, "kind"), field(field(m, "metadata"), "name")
		rules := field(m, "rules")
		if kind == nil || name == nil || rules == nil {
			continue
		}
		var per [][]why
		for _, r := range rules.Content {
			var ws []why
			for _, line := range strings.Split(r.HeadComment, "\n") {
				if w, ok := parseWhy(line); ok {
					ws = append(ws, w)
				}
			}
			per = append(per, ws)
		}
		out[roleID{kind.Value, name.Value}] = per
	}
}

// field is the value of key in the mapping node m, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
