package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/dockerfile"
)

func newDockerfileCommand() *cobra.Command {
	var (
		opts  dockerfile.Options
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "dockerfile",
		Short: "Write a minimal multi-stage Dockerfile for the operator (distroless, non-root)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Dockerfile(opts, out, force, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Main, "main", ".", "main package to build, relative to the module root")
	f.StringVar(&opts.GoVersion, "go-version", "1.26", "golang image tag for the build stage")
	f.StringVar(&opts.BaseImage, "base-image", "", "final stage image (default gcr.io/distroless/static-debian12:nonroot)")
	f.StringVarP(&out, "out", "o", "Dockerfile", `output file, or "-" for standard output`)
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	return inProjectDir(cmd, false)
}
