package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
)

func newUpgradeCommand() *cobra.Command {
	var (
		dir, base string
		write     bool
	)
	cmd := &cobra.Command{
		Use:   "upgrade [FILE...]",
		Short: "Merge this opgen's templates into the scaffold files opgen owns (Makefile, Dockerfile, generate.go, .gitignore), keeping your edits; show the diff, write with --write",
		Long: `opgen init writes some files that stay opgen's build plumbing: the Makefile,
the Dockerfile, generate.go and .gitignore. When opgen's templates change
(new make targets, a new go:generate line), opgen upgrade merges the new
templates into them, three ways, as git merges branches: the base is the
same file as the opgen that scaffolded the project wrote it (its files
say which: "Scaffolded by opgen v0.1.0"; this opgen keeps the templates
of every release). A line you changed and the template did not keeps your
change; a line the template changed and you did not takes the new one; a
line both changed is a conflict, marked in the file as git marks them
(<<<<<<< yours, ||||||| the old template, =======, >>>>>>> the new
template), and listed. .gitignore merges as a set of lines: never a
conflict. It prints a unified diff of each file that would change;
nothing is written without --write, and a write with conflicts exits 1.

FILE arguments limit it to some files, or name main.go or README.md,
which are yours from the start and merged only when named. go.mod,
internal/ and apis/ are never touched.

A project scaffolded by a development build, or by an opgen from before
v0.1.0, has no base: the new templates replace its files, and your edits
show in the diff as lines removed; --base names the release to merge
against instead.

To move a project to a newer opgen (not on the module proxy yet: the
project's go.mod replaces opgen with a clone):
  git -C <the clone> pull
  go tool opgen upgrade           # read the diff
  go tool opgen upgrade --write   # resolve conflicts, if any
  go generate ./...`,
		RunE: func(cmd *cobra.Command, files []string) error {
			return cli.Upgrade(dir, files, write, base, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "the project's root, where go.mod is")
	cmd.Flags().BoolVar(&write, "write", false, "write the files that differ")
	cmd.Flags().StringVar(&base, "base", "", "the opgen release that scaffolded the project (v0.1.0), when its files do not say")
	return cmd
}
