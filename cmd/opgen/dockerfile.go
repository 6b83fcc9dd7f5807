package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

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
			data, err := dockerfile.Build(opts)
			if err != nil {
				return err
			}
			if out != "-" && !force {
				if err := refuseOverwrite(out); err != nil {
					return err
				}
			}
			return writeOutput(cmd, out, data)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Main, "main", ".", "main package to build, relative to the module root")
	f.StringVar(&opts.GoVersion, "go-version", "1.26", "golang image tag for the build stage")
	f.StringVar(&opts.BaseImage, "base-image", "", "final stage image (default gcr.io/distroless/static-debian12:nonroot)")
	f.StringVarP(&out, "out", "o", "Dockerfile", `output file, or "-" for standard output`)
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	return cmd
}

// refuseOverwrite fails when path exists: a Dockerfile is the user's to edit.
func refuseOverwrite(path string) error {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return fmt.Errorf("%s exists and may have your edits: pass --force to overwrite it, or -o - to print", path)
	case errors.Is(err, os.ErrNotExist):
		return nil
	default:
		return err
	}
}
