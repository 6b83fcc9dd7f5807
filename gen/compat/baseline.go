package compat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen"
)

// Baseline is what the gate compares with: the CRDs of the last release.
type Baseline struct {
	// Source says where the CRDs come from, for messages.
	Source string
	// CRDs are the released CRDs, by file name order.
	CRDs []Released
}

// Released is one CRD of the last release.
type Released struct {
	CRD *apiextensionsv1.CustomResourceDefinition
	// File is where it was read, relative to the project root; for a git
	// ref, as ref:path.
	File string
}

// LoadBaseline reads the baseline of the project p: the CRDs of
// p.ReleasedDir, or, with p.BaselineRef, those of p.CRDDir at that git
// ref. It returns nil when ReleasedDir holds no CRD: no baseline, no
// gate. A ref without CRDs is an error, since the run asked for it.
func LoadBaseline(p *gen.Project) (*Baseline, error) {
	if p.BaselineRef != "" {
		return loadRef(p)
	}
	dir := p.Abs(p.ReleasedDir)
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	b := &Baseline{Source: "the last release in " + filepath.ToSlash(p.ReleasedDir)}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		rel := filepath.ToSlash(relative(p.Root, path))
		if err := b.add(rel, data); err != nil {
			return nil, err
		}
	}
	if len(b.CRDs) == 0 {
		return nil, nil
	}
	return b, nil
}

func relative(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

// loadRef reads the CRD manifests of p.CRDDir as the commit p.BaselineRef
// names has them.
func loadRef(p *gen.Project) (*Baseline, error) {
	ref := p.BaselineRef
	dir := filepath.ToSlash(strings.TrimSuffix(p.CRDDir, "/")) + "/"
	list, err := git(p.Root, "ls-tree", "--name-only", ref, "--", dir)
	if err != nil {
		return nil, fmt.Errorf("--baseline-ref %s: %w", ref, err)
	}
	b := &Baseline{Source: "git ref " + ref}
	for _, path := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if !strings.HasSuffix(path, ".yaml") {
			continue
		}
		data, err := git(p.Root, "show", ref+":./"+path)
		if err != nil {
			return nil, fmt.Errorf("--baseline-ref %s: %w", ref, err)
		}
		if err := b.add(ref+":"+path, data); err != nil {
			return nil, err
		}
	}
	if len(b.CRDs) == 0 {
		return nil, fmt.Errorf("--baseline-ref %s: no CustomResourceDefinition in %s at %s: name the commit or tag of the last release, whose CRDs opgen generate wrote there", ref, dir, ref)
	}
	return b, nil
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// add adds the CustomResourceDefinitions of one manifest; documents of
// other kinds are skipped.
func (b *Baseline) add(file string, data []byte) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			return fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		if meta.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			return fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		b.CRDs = append(b.CRDs, Released{CRD: crd, File: file})
	}
}
