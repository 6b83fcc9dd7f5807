package scaffold

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/model"
)

// RefreshTests keeps the kind tests that create api wrote in step with
// the kinds' CRDs in crdDir. A kind test calls the clientset's method for
// the resource, and markers rename it: +kubebuilder:resource:path=todos
// turns Todoes into Todos, scope=Cluster drops its namespace argument.
// A test still as create api rendered it is rendered again with the
// names the CRD has now. An edited test is the user's: when it still
// calls the old method, a warning says what to rename. It returns the
// files it rewrote and the warnings, with paths relative to root, which
// controllerDir and crdDir are relative to too.
func RefreshTests(root, controllerDir, crdDir string) (rewritten, warnings []string, err error) {
	crds, err := readCRDNames(filepath.Join(root, crdDir))
	if err != nil {
		return nil, nil, err
	}
	tests, _ := filepath.Glob(filepath.Join(root, controllerDir, "*_test.go"))
	for _, path := range tests {
		rel, _ := filepath.Rel(root, path)
		wrote, warning, err := refreshTest(path, rel, crds)
		if err != nil {
			return rewritten, warnings, err
		}
		if wrote {
			rewritten = append(rewritten, rel)
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return rewritten, warnings, nil
}

// crdNames is what a kind test depends on in a CRD.
type crdNames struct {
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
	} `json:"spec"`
}

// readCRDNames reads the CRDs of dir by group and kind.
func readCRDNames(dir string) (map[[2]string]crdNames, error) {
	out := map[[2]string]crdNames{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var c crdNames
		if yaml.Unmarshal(data, &c) == nil && c.Spec.Names.Kind != "" {
			out[[2]string{c.Spec.Group, c.Spec.Names.Kind}] = c
		}
	}
	return out, nil
}

var (
	clientCall = regexp.MustCompile(`versioned\.NewForConfigOrDie\(kit\.Config\)\.(\w+)\(\)\.(\w+)\((kit\.Namespace\(t\))?\)`)
	sampleGVK  = regexp.MustCompile(`schema\.GroupVersionKind\{Group: "([^"]+)", Version: "([^"]+)", Kind: "([^"]+)"\}`)
)

// refreshTest refreshes one test file (see RefreshTests).
func refreshTest(path, rel string, crds map[[2]string]crdNames) (wrote bool, warning string, err error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, "", err
	}
	call, gvk := clientCall.FindSubmatch(src), sampleGVK.FindSubmatch(src)
	if call == nil || gvk == nil {
		return false, "", nil // not a kind test of create api
	}
	crd, ok := crds[[2]string{string(gvk[1]), string(gvk[3])}]
	if !ok {
		return false, "", nil
	}
	old, ok := testDataOf(path, src)
	if !ok {
		return false, "", nil
	}
	old.ClientGroup, old.GoPlural, old.ClusterScoped = string(call[1]), string(call[2]), len(call[3]) == 0
	old.Group, old.Version, old.Kind = string(gvk[1]), string(gvk[2]), string(gvk[3])
	now := old
	now.GoPlural = (&model.Kind{Name: old.Kind, Plural: crd.Spec.Names.Plural}).GoPlural()
	now.ClusterScoped = crd.Spec.Scope == "Cluster"
	if now == old {
		return false, "", nil
	}
	if !bytes.Equal(src, render(kindTestTemplate, old)) {
		return false, fmt.Sprintf("%s calls %s, which the clientset names %s since the CRD %s.%s changed (+kubebuilder:resource): rename the call",
			rel, clientCallOf(old), clientCallOf(now), crd.Spec.Names.Plural, crd.Spec.Group), nil
	}
	return true, "", os.WriteFile(path, render(kindTestTemplate, now), 0o644)
}

// clientCallOf is the call of the clientset's method that d's test makes.
func clientCallOf(d testData) string {
	arg := "kit.Namespace(t)"
	if d.ClusterScoped {
		arg = ""
	}
	return fmt.Sprintf("%s().%s(%s)", d.ClientGroup, d.GoPlural, arg)
}

// testDataOf reads from a kind test's package clause and imports the
// template data that does not come from the kind's names.
func testDataOf(path string, src []byte) (testData, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	if err != nil {
		return testData{}, false
	}
	d := testData{Package: strings.TrimSuffix(f.Name.Name, "_test")}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		switch {
		case strings.HasSuffix(p, "/clientset/versioned"):
			d.ClientsetPkg = p
		case imp.Name != nil && imp.Name.Name != "metav1":
			d.APIAlias, d.APIPkg = imp.Name.Name, p
		}
	}
	return d, d.ClientsetPkg != "" && d.APIPkg != ""
}
