package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/scaffold"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

func newInitCommand() *cobra.Command {
	var opts scaffold.ProjectOptions
	cmd := &cobra.Command{
		Use:   "init --module M",
		Short: "Scaffold a new operator project in the current directory (or -C DIR)",
		Long: `Writes go.mod, main.go (a runtime.Main over the generated controller.Setup),
generate.go with the go:generate line, an empty internal/controller package,
a Makefile (` + strings.Join(scaffold.MakefileTargets(), ", ") + `),
a Dockerfile, a README and a .gitignore; then runs go mod tidy and opgen
generate. It never overwrites a file. Next: opgen create api.

go.mod requires the opgen version of this binary. An opgen built from a
clone (go install ./cmd/opgen there) has no version the module proxy
serves: go.mod then replaces opgen with that clone, or with --replace.`,
		Example: `  mkdir hello-operator && cd hello-operator
  opgen init --module example.com/hello-operator
  opgen init -C hello-operator --module example.com/hello-operator   # makes the directory`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			return cli.Init(cmd.Context(), dir, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Module, "module", "", "Go module path of the new project, such as example.com/hello-operator")
	f.StringVar(&opts.Name, "name", "", "operator name (default: the module path's last element)")
	f.StringVar(&opts.Replace, "replace", os.Getenv(osenv.Replace),
		"use this opgen checkout instead of a released opgen (default $"+osenv.Replace+", else the checkout this opgen was built from, if any)")
	_ = cmd.MarkFlagRequired("module")
	return inProjectDir(cmd, true)
}
