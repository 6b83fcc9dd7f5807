package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// UpgradePlan is what opgen upgrade would do to a project's scaffold.
type UpgradePlan struct {
	// From is the opgen the project's files say scaffolded it, or "".
	From string
	// Base is the release whose templates are the base of the merges;
	// "" when this opgen keeps none for From: the new templates then
	// replace the files.
	Base string
	// To is the opgen whose templates the files are merged with.
	To    string
	Files []FileUpgrade
}

// FileUpgrade is the upgrade of one file.
type FileUpgrade struct {
	Path string
	// Current is the file as it is; nil when it does not exist.
	Current []byte
	// Merged is the file after the upgrade; nil to leave it out (the
	// user removed a file opgen owns).
	Merged    []byte
	Conflicts []Conflict
	// Note says how it merged, when a reader needs to know.
	Note string
}

// Changed reports whether the upgrade changes the file.
func (f FileUpgrade) Changed() bool { return f.Merged != nil && !bytes.Equal(f.Current, f.Merged) }

// PlanUpgrade merges the files (paths of UpgradeFiles; the owned ones
// when empty) of the project in dir with the templates that opts, the
// project as it is now (ReadProject) with the opgen that upgrades it,
// renders. The base of each three-way merge is the same file as the
// release that scaffolded the project wrote it (RenderRelease), or, with
// base set, as that release wrote it. It writes nothing.
func PlanUpgrade(dir string, opts ProjectOptions, files []string, base string) (*UpgradePlan, error) {
	if len(files) == 0 {
		files = OwnedFiles()
	}
	for _, f := range files {
		if _, ok := UpgradeFileOf(f); !ok {
			return nil, fmt.Errorf("%s is not a file opgen upgrade merges: name one of %s", f, strings.Join(upgradePaths(), ", "))
		}
	}
	theirs, err := RenderFiles(opts)
	if err != nil {
		return nil, err
	}
	plan := &UpgradePlan{From: ScaffoldedBy(dir), To: opts.Scaffolder()}
	bases, err := plan.base(opts, base)
	if err != nil {
		return nil, err
	}
	for _, path := range files {
		f, err := plan.file(dir, path, bases, theirs[path])
		if err != nil {
			return nil, err
		}
		plan.Files = append(plan.Files, f)
	}
	return plan, nil
}

func upgradePaths() []string {
	var out []string
	for _, f := range UpgradeFiles {
		out = append(out, f.Path)
	}
	return out
}

// base renders the templates of the base release: the one named, or the
// one From names.
func (p *UpgradePlan) base(opts ProjectOptions, named string) (map[string][]byte, error) {
	v := named
	if v == "" {
		v = strings.TrimPrefix(p.From, "opgen ")
	}
	files, ok := RenderRelease(v, opts)
	switch {
	case ok:
		p.Base = v
		return files, nil
	case named != "":
		return nil, fmt.Errorf("--base %s: this opgen keeps the templates of %s only", named, strings.Join(ReleasedVersions(), ", "))
	}
	return nil, nil
}

// file plans the upgrade of one file.
func (p *UpgradePlan) file(dir, path string, bases map[string][]byte, theirs []byte) (FileUpgrade, error) {
	uf, _ := UpgradeFileOf(path)
	f := FileUpgrade{Path: path}
	current, err := os.ReadFile(filepath.Join(dir, path))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return f, err
	default:
		f.Current = current
	}
	base, hasBase := bases[path]
	switch {
	case f.Current == nil && hasBase:
		f.Note = "you removed it: left out"
	case f.Current == nil || !hasBase:
		f.Merged = theirs
	case uf.Set:
		f.Merged = mergeSet(base, f.Current, theirs)
	default:
		f.Merged, f.Conflicts = Merge3(base, f.Current, theirs, Labels{
			Yours: path + " (yours)", Base: "opgen " + p.Base, Theirs: p.To,
		})
	}
	return f, nil
}

// mergeSet merges files that are sets of lines: yours, without the lines
// the new template dropped, with the lines it added at the end.
func mergeSet(base, yours, theirs []byte) []byte {
	b, y, t := lines(base), lines(yours), lines(theirs)
	var out []string
	for _, l := range y {
		if !slices.Contains(b, l) || slices.Contains(t, l) {
			out = append(out, l)
		}
	}
	for _, l := range t {
		if !slices.Contains(b, l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, ""))
}
