// Package adopt turns a kubebuilder v4 project's generation over to opgen
// (opgen adopt): it reads the project's PROJECT file, checks that opgen
// can take it, rewrites the Makefile's manifests and generate targets to
// run opgen, and records opgen as a tool in go.mod. The API types, the
// controllers and config/ stay as they are. Generation then uses the
// kubebuilder layout (generators.Kubebuilder), which writes what
// controller-gen wrote, where it wrote it. docs/migrating.md has the steps.
package adopt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"
)

// ProjectFile is kubebuilder's record of the project.
const ProjectFile = "PROJECT"

// Layout is the kubebuilder plugin layout opgen adopts.
const Layout = "go.kubebuilder.io/v4"

// Project is what PROJECT records, of it what adopt reads.
type Project struct {
	Domain      string     `json:"domain"`
	Repo        string     `json:"repo"`
	ProjectName string     `json:"projectName"`
	Layout      []string   `json:"layout"`
	MultiGroup  bool       `json:"multigroup"`
	Resources   []Resource `json:"resources"`
}

// Resource is a kind of the project: its API, its reconciler and its
// webhooks, as kubebuilder scaffolded them.
type Resource struct {
	Group      string    `json:"group"`
	Domain     string    `json:"domain"`
	Version    string    `json:"version"`
	Kind       string    `json:"kind"`
	Path       string    `json:"path"`
	Controller bool      `json:"controller"`
	API        *API      `json:"api"`
	Webhooks   *Webhooks `json:"webhooks"`
	External   bool      `json:"external"`
}

// API says that kubebuilder scaffolded the kind's types.
type API struct {
	CRDVersion string `json:"crdVersion"`
	Namespaced bool   `json:"namespaced"`
}

// Webhooks are the webhooks kubebuilder scaffolded for a kind.
type Webhooks struct {
	Defaulting bool `json:"defaulting"`
	Validation bool `json:"validation"`
	Conversion bool `json:"conversion"`
}

// GroupName is the kind's API group, as kubebuilder composes it.
func (r Resource) GroupName() string {
	switch {
	case r.Domain == "":
		return r.Group
	case r.Group == "":
		return r.Domain
	}
	return r.Group + "." + r.Domain
}

// ReadProject reads and checks the PROJECT file of the project in dir.
func ReadProject(dir string) (*Project, error) {
	path := filepath.Join(dir, ProjectFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s file: run opgen adopt at the root of a kubebuilder project", dir, ProjectFile)
	}
	if err != nil {
		return nil, err
	}
	var p Project
	if err := yaml.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, p.check(dir)
}

// check reports what keeps opgen from adopting the project.
func (p *Project) check(dir string) error {
	if !slices.Contains(p.Layout, Layout) {
		return fmt.Errorf("%s: layout %v; opgen adopts kubebuilder's %s layout: migrate the project to it first (kubebuilder alpha generate)", ProjectFile, p.Layout, Layout)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("read go.mod beside %s: %w", ProjectFile, err)
	}
	if path := modfile.ModulePath(mod); path != p.Repo {
		return fmt.Errorf("%s: repo %q, but go.mod declares module %q: run opgen adopt in the module kubebuilder scaffolded", ProjectFile, p.Repo, path)
	}
	return nil
}

// ConversionWebhooks are the kinds whose conversion webhook kubebuilder
// scaffolded: controller-runtime's webhook server in the project keeps
// serving them, and their CRDs get the conversion from the project's
// kustomize patches, as before.
func (p *Project) ConversionWebhooks() []string {
	var out []string
	for _, r := range p.Resources {
		if r.Webhooks != nil && r.Webhooks.Conversion && !slices.Contains(out, r.Kind) {
			out = append(out, r.Kind)
		}
	}
	return out
}

// KindCount is the number of the project's own kinds: a kind served in
// several versions counts once.
func (p *Project) KindCount() int {
	seen := map[string]bool{}
	for _, r := range p.OwnKinds() {
		seen[r.GroupName()+"/"+r.Kind] = true
	}
	return len(seen)
}

// OwnKinds are the resources whose API types the project declares (not
// external or core types, which kubebuilder only gives controllers).
func (p *Project) OwnKinds() []Resource {
	var out []Resource
	for _, r := range p.Resources {
		if r.API != nil && !r.External && strings.HasPrefix(r.Path, p.Repo+"/") {
			out = append(out, r)
		}
	}
	return out
}
