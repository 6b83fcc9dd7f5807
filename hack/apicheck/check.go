package main

import (
	"bytes"
	"fmt"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/packages"
)

// Result is what Check found: the incompatible changes since the release,
// and those of them the changelog does not list.
type Result struct {
	// Incompatible are apidiff's messages for the incompatible changes,
	// each with the package it is in.
	Incompatible []Change
	// Unlisted are the changes the changelog's Unreleased section does not
	// name.
	Unlisted []Change
}

// Change is one incompatible change of a package's API.
type Change struct {
	// Package is the package's name as code qualifies it (plug).
	Package string
	// Message is apidiff's: "DescendantStore.Prune: changed from ...".
	Message string
	// Removed is the import path of a package that is gone, which the
	// changelog names whole.
	Removed string
}

// Name is the changed identifier, qualified by its package, as the
// changelog must name it: plug.DescendantStore.Prune, or the import path
// of a removed package.
func (c Change) Name() string {
	if c.Removed != "" {
		return c.Removed
	}
	name, _, _ := strings.Cut(c.Message, ":")
	name = typeParams.ReplaceAllString(name, "")
	name = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(name)
	return c.Package + "." + name
}

// typeParams are the type parameters apidiff writes after a generic
// type's name (Validator[T apis.Object]).
var typeParams = regexp.MustCompile(`\[[^\]]*\]`)

func (c Change) String() string { return c.Package + ": " + c.Message }

// Options say what to compare.
type Options struct {
	// Repo is the git checkout whose working tree is compared.
	Repo string
	// Base is the commit of the last release.
	Base string
	// Patterns select the packages of the contract, relative to Repo.
	Patterns []string
	// Changelog is the changelog's path, relative to Repo.
	Changelog string
}

// Check compares the API of the packages of opts.Patterns in the working
// tree with their API at opts.Base, and the incompatible changes with the
// changelog's Unreleased section.
func Check(opts Options) (*Result, error) {
	base, err := os.MkdirTemp("", "apicheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)
	if err := extract(opts.Repo, opts.Base, base); err != nil {
		return nil, err
	}
	old, err := load(base, opts.Patterns)
	if err != nil {
		return nil, fmt.Errorf("load the API of %s: %w", opts.Base, err)
	}
	cur, err := load(opts.Repo, opts.Patterns)
	if err != nil {
		return nil, fmt.Errorf("load the API of the working tree: %w", err)
	}
	section, err := unreleased(filepath.Join(opts.Repo, opts.Changelog))
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for path, np := range cur {
		op, ok := old[path]
		if !ok {
			continue // a new package breaks nothing
		}
		for _, c := range apidiff.Changes(op, np).Changes {
			if c.Compatible {
				continue
			}
			ch := Change{Package: np.Name(), Message: c.Message}
			res.Incompatible = append(res.Incompatible, ch)
			if !listed(section, ch.Name()) {
				res.Unlisted = append(res.Unlisted, ch)
			}
		}
	}
	for path, op := range old {
		if _, ok := cur[path]; !ok {
			ch := Change{Package: op.Name(), Message: "package " + path + ": removed", Removed: path}
			res.Incompatible = append(res.Incompatible, ch)
			if !strings.Contains(section, "`"+path+"`") {
				res.Unlisted = append(res.Unlisted, ch)
			}
		}
	}
	return res, nil
}

// listed reports whether the section names the change's identifier, or
// the identifier it is a member of, in backquotes.
func listed(section, name string) bool {
	parts := strings.Split(name, ".")
	for i := 2; i <= len(parts); i++ {
		q := "`" + strings.Join(parts[:i], ".")
		if strings.Contains(section, q+"`") || strings.Contains(section, q+".") || strings.Contains(section, q+"(") {
			return true
		}
	}
	return false
}

var heading = regexp.MustCompile(`(?m)^## `)

// unreleased returns the changelog's "## Unreleased" section.
func unreleased(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the changelog: %w", err)
	}
	s := string(data)
	i := strings.Index(s, "\n## Unreleased")
	if i < 0 {
		return "", fmt.Errorf("%s has no \"## Unreleased\" section: add one, where the changes since the last release are listed", path)
	}
	s = s[i+1:]
	if loc := heading.FindStringIndex(s[3:]); loc != nil {
		s = s[:loc[0]+3]
	}
	return s, nil
}

// extract writes the tree of rev in repo into dir.
func extract(repo, rev, dir string) error {
	archive := exec.Command("git", "archive", "--format=tar", rev)
	archive.Dir = repo
	var tarball, stderr bytes.Buffer
	archive.Stdout, archive.Stderr = &tarball, &stderr
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s (the release's commit must be in the clone: fetch its history)", rev, err, strings.TrimSpace(stderr.String()))
	}
	untar := exec.Command("tar", "-x", "-C", dir)
	untar.Stdin = &tarball
	if out, err := untar.CombinedOutput(); err != nil {
		return fmt.Errorf("unpack %s: %v: %s", rev, err, out)
	}
	return nil
}

// load type-checks the packages of patterns in dir, from export data, and
// returns them by import path, internal packages left out.
func load(dir string, patterns []string) (map[string]*types.Package, error) {
	cfg := &packages.Config{Dir: dir, Mode: packages.NeedName | packages.NeedTypes}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	out := map[string]*types.Package{}
	var errs []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
		if strings.Contains(p.PkgPath, "/internal/") || strings.HasSuffix(p.PkgPath, "/internal") || p.Types == nil {
			continue
		}
		out[p.PkgPath] = p.Types
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}
