package main

import (
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// versionAnnotation is the one difference allowed between two CRDs: it
// names the generator's version.
const versionAnnotation = "controller-gen.kubebuilder.io/version"

func isYAML(path string) bool { return strings.HasSuffix(path, ".yaml") }
func isGo(path string) bool   { return strings.HasSuffix(path, ".go") }

// compareTrees compares the files that match keep under dirs (relative to
// the module roots ref and gen) with eq, and logs the differences.
func compareTrees(ref, gen string, dirs []string, keep func(string) bool, eq func(a, b []byte) []string, log string) tally {
	var t tally
	for _, dir := range dirs {
		refFiles, genFiles := files(filepath.Join(ref, dir), keep), files(filepath.Join(gen, dir), keep)
		for name := range genFiles {
			if _, ok := refFiles[name]; !ok {
				t.extra = append(t.extra, filepath.Join(dir, name))
			}
		}
		for name, path := range refFiles {
			t.total++
			rel := filepath.Join(dir, name)
			other, ok := genFiles[name]
			if !ok {
				t.missing = append(t.missing, rel)
				continue
			}
			if diffs := eq(read(path), read(other)); len(diffs) > 0 {
				t.differ = append(t.differ, rel)
				appendFile(log, fmt.Sprintf("== %s\n%s", rel, strings.Join(diffs, "\n")))
				continue
			}
			t.equal++
		}
	}
	sort.Strings(t.differ)
	sort.Strings(t.missing)
	sort.Strings(t.extra)
	return t
}

// compareNamed compares every file called name that the reference wrote
// anywhere in the module with opgen's at the same path. A file opgen
// writes where the reference writes none is compared with the one the
// project committed (src is the module as downloaded), which the
// project's own, older code-generator wrote: equal, it counts as such.
func compareNamed(src, ref, gen, name, log string) tally {
	var t tally
	refFiles := files(ref, func(p string) bool { return filepath.Base(p) == name })
	for rel, path := range refFiles {
		t.total++
		other := filepath.Join(gen, rel)
		if !exists(other) {
			t.missing = append(t.missing, rel)
			continue
		}
		if diffs := goEqual(read(path), read(other)); len(diffs) > 0 {
			t.differ = append(t.differ, rel)
			appendFile(log, fmt.Sprintf("== %s\n%s", rel, strings.Join(diffs, "\n")))
			continue
		}
		t.equal++
	}
	for rel, path := range files(gen, func(p string) bool { return filepath.Base(p) == name }) {
		if _, ok := refFiles[rel]; ok {
			continue
		}
		committed := filepath.Join(src, rel)
		if exists(committed) {
			if diffs := goEqual(read(committed), read(path)); len(diffs) == 0 {
				t.committed++
				continue
			}
			appendFile(log, fmt.Sprintf("== %s (against the committed file)\n%s", rel, strings.Join(goEqual(read(committed), read(path)), "\n")))
		}
		t.extra = append(t.extra, rel)
	}
	sort.Strings(t.differ)
	sort.Strings(t.missing)
	sort.Strings(t.extra)
	return t
}

// files returns the files under dir that keep selects, by their path
// relative to dir. It skips vendor.
func files(dir string, keep func(string) bool) map[string]string {
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "vendor" {
			return filepath.SkipDir
		}
		if !d.IsDir() && keep(path) {
			rel, _ := filepath.Rel(dir, path)
			out[rel] = path
		}
		return nil
	})
	return out
}

func read(path string) []byte {
	data, _ := os.ReadFile(path)
	return data
}

// crdEqual compares two CRD manifests as data, less the generator's
// version annotation, and returns the paths where they differ.
func crdEqual(a, b []byte) []string {
	var x, y any
	if err := yaml.Unmarshal(a, &x); err != nil {
		return []string{"reference: " + err.Error()}
	}
	if err := yaml.Unmarshal(b, &y); err != nil {
		return []string{"opgen: " + err.Error()}
	}
	dropVersion(x)
	dropVersion(y)
	var diffs []string
	diffValues("", x, y, &diffs)
	return diffs
}

func dropVersion(v any) {
	m, _ := v.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	delete(ann, versionAnnotation)
	if ann != nil && len(ann) == 0 {
		delete(meta, "annotations")
	}
}

// diffValues records, up to 20, the paths where x and y differ.
func diffValues(path string, x, y any, out *[]string) {
	if len(*out) >= 20 || reflect.DeepEqual(x, y) {
		return
	}
	xm, xok := x.(map[string]any)
	ym, yok := y.(map[string]any)
	if xok && yok {
		keys := map[string]bool{}
		for k := range xm {
			keys[k] = true
		}
		for k := range ym {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffValues(path+"."+k, xm[k], ym[k], out)
		}
		return
	}
	xs, xok := x.([]any)
	ys, yok := y.([]any)
	if xok && yok && len(xs) == len(ys) {
		for i := range xs {
			diffValues(fmt.Sprintf("%s[%d]", path, i), xs[i], ys[i], out)
		}
		return
	}
	*out = append(*out, fmt.Sprintf("%s: reference %s, opgen %s", path, brief(x), brief(y)))
}

func brief(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// goEqual compares two Go files beyond their headers and the grouping of
// their imports, and returns the first differing lines.
func goEqual(a, b []byte) []string {
	x, y := normalizeGo(a), normalizeGo(b)
	if x == y {
		return nil
	}
	xl, yl := strings.Split(x, "\n"), strings.Split(y, "\n")
	for i := 0; i < len(xl) || i < len(yl); i++ {
		var l, m string
		if i < len(xl) {
			l = xl[i]
		}
		if i < len(yl) {
			m = yl[i]
		}
		if l != m {
			return []string{fmt.Sprintf("line %d: reference %q", i+1, l), fmt.Sprintf("line %d: opgen     %q", i+1, m)}
		}
	}
	return []string{"differ"}
}

// normalizeGo drops everything above the package clause (the licence
// header, the generator's "Code generated" line, build tags) and turns the
// imports into one sorted block, so that two generators' files compare by
// their code.
func normalizeGo(src []byte) string {
	lines := strings.Split(string(src), "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "package ") {
			start = i
			break
		}
	}
	lines = lines[start:]
	var body, imports []string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "import (":
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ")"; i++ {
				if spec := strings.TrimSpace(lines[i]); spec != "" && !strings.HasPrefix(spec, "//") {
					imports = append(imports, spec)
				}
			}
		case strings.HasPrefix(l, "import "):
			imports = append(imports, strings.TrimSpace(strings.TrimPrefix(l, "import ")))
		default:
			body = append(body, lines[i])
		}
	}
	sort.Strings(imports)
	out := body[0] + "\n\n"
	if len(imports) > 0 {
		out += "import (\n" + strings.Join(imports, "\n") + "\n)\n"
	}
	out += strings.Join(body[1:], "\n")
	if formatted, err := format.Source([]byte(out)); err == nil {
		return string(formatted)
	}
	return out
}
