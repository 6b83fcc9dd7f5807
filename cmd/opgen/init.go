package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/gen/scaffold"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

func newInitCommand() *cobra.Command {
	var opts scaffold.ProjectOptions
	cmd := &cobra.Command{
		Use:   "init --module M",
		Short: "Scaffold a new operator project in the current directory",
		Long: `Writes go.mod, main.go (a runtime.Main over the generated controller.Setup),
generate.go with the go:generate line, an empty internal/controller package,
a Makefile (generate, manifests, install, uninstall, deploy, undeploy, run, dev,
test, build), a Dockerfile,
a README and a .gitignore; then runs go mod tidy and opgen generate. It never
overwrites a file. Next: opgen create api.`,
		Example: `  mkdir hello-operator && cd hello-operator
  opgen init --module example.com/hello-operator`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			if v := buildVersion(); v != "(devel)" {
				opts.OpgenVersion = v
			}
			if opts.Replace != "" {
				if opts.Replace, err = filepath.Abs(opts.Replace); err != nil {
					return err
				}
			}
			created, err := scaffold.InitProject(dir, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, f := range created.Files {
				rel, _ := filepath.Rel(dir, f)
				fmt.Fprintf(out, "created %s\n", rel)
			}
			if err := goModTidy(cmd, dir); err != nil {
				return err
			}
			if _, err := gen.Run(cmd.Context(), gen.Options{Root: dir, Version: buildVersion()}, generators.All()); err != nil {
				return err
			}
			for _, n := range created.Notes {
				fmt.Fprintf(out, "%s\n", n)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Module, "module", "", "Go module path of the new project, such as example.com/hello-operator")
	f.StringVar(&opts.Name, "name", "", "operator name (default: the module path's last element)")
	f.StringVar(&opts.Replace, "replace", os.Getenv(osenv.Replace),
		"use this opgen checkout instead of a released opgen (default $"+osenv.Replace+")")
	_ = cmd.MarkFlagRequired("module")
	return cmd
}

func goModTidy(cmd *cobra.Command, dir string) error {
	tidy := exec.CommandContext(cmd.Context(), "go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Stdout, tidy.Stderr = cmd.ErrOrStderr(), cmd.ErrOrStderr()
	if err := tidy.Run(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %w", dir, err)
	}
	return nil
}
