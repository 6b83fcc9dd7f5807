package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
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
// kubebuilder lays them out. The webhook directory holds the webhook
// objects (see webhook.go) beside opgen generate's manifests.yaml, which
// the layout does not list: its objects are rebuilt for the namespace.
const (
	KustomizeDefault = "default"
	KustomizeManager = "manager"
	KustomizeRBAC    = "rbac"
	KustomizeCRD     = "crd"
	KustomizeSamples = "samples"
	KustomizeWebhook = WebhookDir
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
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	layout, rbacPatches, err := b.kustomizeObjects()
	if err != nil {
		return nil, err
	}
	if err := b.loadWebhooks(); err != nil {
		return nil, err
	}
	crdPatches, err := b.crdPatches()
	if err != nil {
		return nil, err
	}
	crdFiles, err := crdFileNames(filepath.Join(b.ConfigDir, KustomizeCRD))
	if err != nil {
		return nil, err
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
	for _, dir := range []string{KustomizeCRD, KustomizeRBAC, KustomizeManager, KustomizeWebhook} {
		if len(resources[dir]) == 0 {
			continue
		}
		var extra map[string]any
		if dir == KustomizeRBAC && len(rbacPatches) > 0 {
			extra = map[string]any{"patches": rbacPatches}
		}
		if dir == KustomizeCRD && len(crdPatches) > 0 {
			extra = map[string]any{"patches": crdPatches}
		}
		files[filepath.Join(dir, kustomizationFile)] = kustomization(sorted(resources[dir]), extra)
		resources[KustomizeDefault] = append(resources[KustomizeDefault], "../"+dir)
	}
	files[filepath.Join(KustomizeDefault, kustomizationFile)] = kustomization(sorted(resources[KustomizeDefault]), map[string]any{
		"namespace": b.Namespace,
		"labels":    []any{map[string]any{"pairs": b.commonLabels()}},
	})
	samples, err := sampleFileNames(filepath.Join(b.ConfigDir, KustomizeSamples))
	if err != nil {
		return nil, err
	}
	if len(samples) > 0 {
		files[filepath.Join(KustomizeSamples, kustomizationFile)] = kustomization(samples, nil)
	}
	return files, nil
}

// kustomizeObjects returns the YAML documents of the objects Build makes
// itself (not those it reads from opgen generate's files), by directory
// of the layout and file: one file per kind; and the patches that add to
// the roles read from files the rules Build adds (those secure metrics
// need).
func (o *builder) kustomizeObjects() (map[string]map[string][][]byte, []any, error) {
	objects, err := o.objects()
	if err != nil {
		return nil, nil, err
	}
	fromFiles, err := o.rbacFiles()
	if err != nil {
		return nil, nil, err
	}
	layout := map[string]map[string][][]byte{}
	var patches []any
	for _, obj := range objects {
		doc, err := marshal(obj)
		if err != nil {
			return nil, nil, err
		}
		kind, name, err := kindAndName(doc)
		if err != nil {
			return nil, nil, err
		}
		if file, ok := fromFiles[kind+"/"+name]; ok {
			patch, err := rulesPatch(kind, name, doc, file)
			if err != nil {
				return nil, nil, err
			}
			if patch != nil {
				patches = append(patches, patch)
			}
			continue // listed from its file
		}
		if kind == "CustomResourceDefinition" {
			continue // listed from its file
		}
		dir := kustomizeDir(kind)
		if o.isWebhookObject(kind, name) {
			dir = KustomizeWebhook
		}
		if layout[dir] == nil {
			layout[dir] = map[string][][]byte{}
		}
		file := snake(kind) + ".yaml"
		layout[dir][file] = append(layout[dir][file], doc)
	}
	return layout, patches, nil
}

// rulesPatch returns the kustomize patch that turns the rules of the role
// in file into those of doc, Build's role: JSON patch operations that
// append the rules Build adds. It returns nil when the rules are the same.
func rulesPatch(kind, name string, doc, file []byte) (any, error) {
	var built, read struct {
		Rules []any `json:"rules"`
	}
	if err := yaml.Unmarshal(doc, &built); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(file, &read); err != nil {
		return nil, err
	}
	if len(built.Rules) < len(read.Rules) || !equality.Semantic.DeepEqual(built.Rules[:len(read.Rules)], read.Rules) {
		return nil, fmt.Errorf("manifest: %s %s: the manifest's rules do not extend config/rbac's: run `go generate ./...`", kind, name)
	}
	added := built.Rules[len(read.Rules):]
	if len(added) == 0 {
		return nil, nil
	}
	var ops []any
	if len(read.Rules) == 0 {
		ops = append(ops, map[string]any{"op": "add", "path": "/rules", "value": added})
	} else {
		for _, r := range added {
			ops = append(ops, map[string]any{"op": "add", "path": "/rules/-", "value": r})
		}
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"target": map[string]any{"kind": kind, "name": name},
		"patch":  string(patch),
	}, nil
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
	for _, dir := range []string{KustomizeDefault, KustomizeManager, KustomizeRBAC, KustomizeCRD, KustomizeSamples, KustomizeWebhook} {
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
func (o *builder) commonLabels() map[string]string {
	var m metav1.ObjectMeta
	o.label(&m)
	return m.Labels
}

// rbacFiles returns the files Build reads from config/rbac, by the kind
// and name of their object.
func (o *builder) rbacFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, file := range []string{"role.yaml", "leader_election_role.yaml"} {
		data, err := os.ReadFile(filepath.Join(o.ConfigDir, KustomizeRBAC, file))
		if err != nil {
			return nil, fmt.Errorf("manifest: %w; run `go generate ./...` to write config/rbac", err)
		}
		kind, name, err := kindAndName(data)
		if err != nil {
			return nil, fmt.Errorf("manifest: %s: %w", file, err)
		}
		out[kind+"/"+name] = data
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
