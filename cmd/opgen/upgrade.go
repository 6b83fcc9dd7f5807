package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/scaffold"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

func newUpgradeCommand() *cobra.Command {
	var (
		dir   string
		write bool
	)
	cmd := &cobra.Command{
		Use:   "upgrade [FILE...]",
		Short: "Re-render the scaffold files opgen owns (Makefile, Dockerfile, generate.go) for this opgen; show the diff, write with --write",
		Long: `opgen init writes some files that stay opgen's build plumbing: the Makefile,
the Dockerfile and generate.go. When opgen's templates change (new make
targets, a new go:generate line), opgen upgrade renders them again for this
project with the opgen that runs it, and prints a unified diff of each file
that would change. Nothing is written without --write. FILE arguments
limit it to some of those files.

Your code is never touched: go.mod, main.go, README.md, .gitignore,
internal/ and apis/ are yours from the start. Edits you made to an owned
file show in the diff as lines it would remove: keep them by not writing
that file, or write and add them back.

To move a project to a newer opgen:
  go get github.com/opgen-sdk/opgen@latest
  go tool opgen upgrade           # read the diff
  go tool opgen upgrade --write
  go generate ./...`,
		RunE: func(cmd *cobra.Command, files []string) error {
			return upgrade(cmd, dir, files, write)
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "the project's root, where go.mod is")
	cmd.Flags().BoolVar(&write, "write", false, "write the files that differ")
	return cmd
}

func upgrade(cmd *cobra.Command, dir string, files []string, write bool) error {
	opts, err := scaffold.ReadProject(dir)
	if err != nil {
		return err
	}
	before := scaffold.ScaffoldedBy(dir)
	if before == "" {
		before = "an opgen from before the scaffold recorded its version"
	}
	with := "this opgen's templates (a development build), recording the opgen go.mod requires"
	if v := buildVersion(); v != "" && v != "(devel)" {
		opts.OpgenVersion = v
		with = "the templates of opgen " + v
	}
	rendered, err := scaffold.RenderOwned(opts)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = scaffold.OwnedFiles
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "project %s (%s), scaffolded by %s; rendering with %s\n", opts.Name, opts.Module, before, with)
	var changed []string
	for _, f := range files {
		if !slices.Contains(scaffold.OwnedFiles, f) {
			return fmt.Errorf("%s is not a file opgen upgrade renders: name one of %v", f, scaffold.OwnedFiles)
		}
		path := filepath.Join(dir, f)
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if bytes.Equal(old, rendered[f]) {
			continue
		}
		changed = append(changed, f)
		diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(rendered[f])),
			FromFile: "a/" + f, ToFile: "b/" + f, Context: 3,
		})
		if err != nil {
			return err
		}
		fmt.Fprint(out, diff)
		if write {
			if err := osenv.WriteFileAtomic(path, rendered[f], 0o644); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
		}
	}
	switch {
	case len(changed) == 0:
		fmt.Fprintln(out, "up to date: nothing to change")
	case write:
		fmt.Fprintf(out, "wrote %v; run go generate ./... next\n", changed)
	default:
		fmt.Fprintf(out, "%v would change: run opgen upgrade --write to write them\n", changed)
	}
	return nil
}
