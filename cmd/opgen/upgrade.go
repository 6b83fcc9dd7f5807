package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
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
			return cli.Upgrade(dir, files, write, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "the project's root, where go.mod is")
	cmd.Flags().BoolVar(&write, "write", false, "write the files that differ")
	return cmd
}
