package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// usesOpgen reports whether the module of gomod is opgen or names it in a
// require, tool or replace line.
func usesOpgen(gomod, modulePath string) bool {
	if modulePath == OpgenModule {
		return true
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	f, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		return false
	}
	for _, r := range f.Require {
		if r.Mod.Path == OpgenModule {
			return true
		}
	}
	for _, r := range f.Replace {
		if r.Old.Path == OpgenModule {
			return true
		}
	}
	for _, t := range f.Tool {
		if strings.HasPrefix(t.Path, OpgenModule+"/") {
			return true
		}
	}
	return false
}

func findModule(dir string) (string, string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", "", fmt.Errorf("%s: no module line; run `go mod init`", filepath.Join(d, "go.mod"))
			}
			return d, mod, nil
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("%s is not inside a Go module: run opgen from a directory under a go.mod (go mod init)", dir)
		}
	}
}

// expandPatterns turns relative package patterns into directories that
// hold Go files, and returns the source files of each (sorted). It reads
// each directory once: a no-op run over 200 kinds walks about 460.
func expandPatterns(root string, patterns []string) ([]string, map[string][]string, error) {
	return walkPatterns(root, patterns, &lister{seen: map[string]dirList{}})
}

// walkPatterns is expandPatterns with the directories listed by l.
func walkPatterns(root string, patterns []string, l *lister) ([]string, map[string][]string, error) {
	sources := map[string][]string{}
	add := func(dir string, d dirList) {
		for _, name := range d.Sources {
			sources[dir] = append(sources[dir], filepath.Join(dir, name))
		}
	}
	var walk func(dir string, d dirList) error
	walk = func(dir string, d dirList) error {
		add(dir, d)
		for _, name := range d.Subdirs {
			sub := filepath.Join(dir, name)
			subList, err := l.list(sub)
			if err != nil {
				return err
			}
			if subList.Module {
				continue // a nested module
			}
			if err := walk(sub, subList); err != nil {
				return err
			}
		}
		return nil
	}
	for _, pat := range patterns {
		if !strings.HasPrefix(pat, ".") && !filepath.IsAbs(pat) {
			return nil, nil, fmt.Errorf("package pattern %q is not relative to the project root: write it like ./apis/... or ./apis/v1", pat)
		}
		recursive := strings.HasSuffix(pat, "/...")
		dir := filepath.Join(root, strings.TrimSuffix(pat, "/..."))
		if pat == "..." {
			dir, recursive = root, true
		}
		if _, done := sources[dir]; done {
			continue
		}
		d, err := l.list(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("package pattern %q: %s is not a directory", pat, dir)
		}
		if !recursive {
			add(dir, d)
			continue
		}
		if err := walk(dir, d); err != nil {
			return nil, nil, err
		}
	}
	dirs := make([]string, 0, len(sources))
	for d := range sources {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs, sources, nil
}

// skipName reports whether the go command skips a directory of this name
// in a ./... pattern.
func skipName(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

func hasGoFiles(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isSourceFile(e.Name()) {
			return true
		}
	}
	return false
}

// isSourceFile reports whether name is a non-test Go file.
func isSourceFile(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}
