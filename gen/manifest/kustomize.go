package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// KustomizeHeader opens every file that the kustomize layout writes. It is
// not gen.Header on purpose: opgen generate removes the files carrying that
// header from config/crd that it did not write itself.
const KustomizeHeader = "# Written by opgen manifests --format kustomize (make manifests): rerun it to refresh,\n" +
	"# edits here are lost. Customize in an overlay of your own, with resources: [../default].\n"

// The directories of the kustomize layout under the config directory, as
// kubebuilder lays them out. There is no webhook directory: opgen
// generates no webhooks.
const (
	KustomizeDefault = "default"
	KustomizeManager = "manager"
	KustomizeRBAC    = "rbac"
	KustomizeCRD     = "crd"
	KustomizeSamples = "samples"
)

const kustomizationFile = "kustomization.yaml"

// Kustomize returns the kustomize layout of the manifest: the files to
// write, keyed by their path relative to the config directory.
// `kubectl kustomize <config>/default` builds the same objects as Build:
//
//   - crd/ and rbac/ list the files opgen generate wrote there; the default
//     layer gives them the namespace and labels that Build gives them;
//   - the objects Build makes itself go, one file per kind, to rbac/ (the
//     ServiceAccount and the bindings), manager/ (the Namespace and the
//     Deployment) or default/ (any other kind);
//   - samples/ lists config/samples, which default/ leaves out (as
//     kubebuilder does): `kubectl apply -k config/samples` creates them.
func Kustomize(opts Options) (map[string][]byte, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	objects, err := opts.objects()
	if err != nil {
		return nil, err
	}
	fromFiles, err := opts.rbacFiles()
	if err != nil {
		return nil, err
	}
	crdFiles, err := crdFileNames(filepath.Join(opts.ConfigDir, KustomizeCRD))
	if err != nil {
		return nil, err
	}
	layout := map[string]map[string][][]byte{} // dir → file → documents
	for _, obj := range objects {
		doc, err := marshal(obj)
		if err != nil {
			return nil, err
		}
		kind, name, err := kindAndName(doc)
		if err != nil {
			return nil, err
		}
		if kind == "CustomResourceDefinition" || fromFiles[kind+"/"+name] {
			continue // listed from its file
		}
		dir := kustomizeDir(kind)
		if layout[dir] == nil {
			layout[dir] = map[string][][]byte{}
		}
		file := snake(kind) + ".yaml"
		layout[dir][file] = append(layout[dir][file], doc)
	}
	files := map[string][]byte{}
	resources := map[string][]string{
		KustomizeCRD:  crdFiles,
		KustomizeRBAC: {"role.yaml", "leader_election_role.yaml"},
	}
	for dir, byFile := range layout {
		for file, docs := range byFile {
			files[filepath.Join(dir, file)] = append([]byte(KustomizeHeader), bytes.Join(docs, []byte("---\n"))...)
			resources[dir] = append(resources[dir], file)
		}
	}
	for _, dir := range []string{KustomizeCRD, KustomizeRBAC, KustomizeManager} {
		if len(resources[dir]) == 0 {
			continue
		}
		files[filepath.Join(dir, kustomizationFile)] = kustomization(sorted(resources[dir]), nil)
		resources[KustomizeDefault] = append(resources[KustomizeDefault], "../"+dir)
	}
	files[filepath.Join(KustomizeDefault, kustomizationFile)] = kustomization(sorted(resources[KustomizeDefault]), map[string]any{
		"namespace": opts.Namespace,
		"labels":    []any{map[string]any{"pairs": opts.commonLabels()}},
	})
	samples, err := sampleFileNames(filepath.Join(opts.ConfigDir, KustomizeSamples))
	if err != nil {
		return nil, err
	}
	if len(samples) > 0 {
		files[filepath.Join(KustomizeSamples, kustomizationFile)] = kustomization(samples, nil)
	}
	return files, nil
}

// WriteKustomize writes the kustomize layout into the config directory
// and removes the files an earlier run wrote that this one does not (a
// kind that went away). It returns the paths it wrote, sorted.
func WriteKustomize(opts Options) ([]string, error) {
	files, err := Kustomize(opts)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for rel := range files {
		paths = append(paths, filepath.Join(opts.ConfigDir, rel))
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(opts.ConfigDir, p)
		if err := osenv.WriteFileAtomic(p, files[rel], 0o644); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
	}
	return paths, removeStaleKustomize(opts.ConfigDir, files)
}

func removeStaleKustomize(configDir string, keep map[string][]byte) error {
	for _, dir := range []string{KustomizeDefault, KustomizeManager, KustomizeRBAC, KustomizeCRD, KustomizeSamples} {
		paths, _ := filepath.Glob(filepath.Join(configDir, dir, "*.yaml"))
		for _, p := range paths {
			rel, _ := filepath.Rel(configDir, p)
			if _, ok := keep[rel]; ok || !hasKustomizeHeader(p) {
				continue
			}
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("manifest: remove stale %s: %w", p, err)
			}
		}
	}
	return nil
}

func hasKustomizeHeader(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(data, []byte(KustomizeHeader))
}

// kustomizeDir is the directory of the layout where an object of kind
// that Build makes goes.
func kustomizeDir(kind string) string {
	switch kind {
	case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
		return KustomizeRBAC
	case "Namespace", "Deployment":
		return KustomizeManager
	}
	return KustomizeDefault
}

func kustomization(resources []string, extra map[string]any) []byte {
	k := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  resources,
	}
	for key, v := range extra {
		k[key] = v
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		panic(err) // plain maps and strings always marshal
	}
	return append([]byte(KustomizeHeader), data...)
}

// commonLabels are the labels Build puts on every object.
func (o Options) commonLabels() map[string]string {
	var m metav1.ObjectMeta
	o.label(&m)
	return m.Labels
}

// rbacFiles returns kind/name of the objects Build reads from config/rbac.
func (o Options) rbacFiles() (map[string]bool, error) {
	out := map[string]bool{}
	for _, file := range []string{"role.yaml", "leader_election_role.yaml"} {
		data, err := os.ReadFile(filepath.Join(o.ConfigDir, KustomizeRBAC, file))
		if err != nil {
			return nil, fmt.Errorf("manifest: %w; run `go generate ./...` to write config/rbac", err)
		}
		kind, name, err := kindAndName(data)
		if err != nil {
			return nil, fmt.Errorf("manifest: %s: %w", file, err)
		}
		out[kind+"/"+name] = true
	}
	return out, nil
}

func kindAndName(doc []byte) (kind, name string, err error) {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return "", "", err
	}
	if head.Kind == "" {
		return "", "", errors.New("no kind")
	}
	return head.Kind, head.Metadata.Name, nil
}

// crdFileNames lists the files of dir that hold a CustomResourceDefinition.
func crdFileNames(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		crds, err := readCRDFile(p)
		if err != nil {
			return nil, err
		}
		if len(crds) > 0 {
			out = append(out, filepath.Base(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// sampleFileNames lists the samples of dir, the kustomization aside.
func sampleFileNames(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if filepath.Base(p) != kustomizationFile {
			out = append(out, filepath.Base(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// snake turns a kind into a file name: ClusterRoleBinding → cluster_role_binding.
func snake(kind string) string {
	var b strings.Builder
	for i, r := range kind {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
