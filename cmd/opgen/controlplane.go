package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/internal/controlplane"
)

func newControlplaneCommand() *cobra.Command {
	var printDir bool
	cmd := &cobra.Command{
		Use:   "controlplane",
		Short: "Build the local control-plane binaries when missing and print where they are",
		Long: `Builds etcd, kube-apiserver, kube-controller-manager and kubectl from Go
modules (no Docker, nothing prebuilt) into the control-plane cache:
${XDG_CACHE_HOME:-$HOME/.cache}/opgen/controlplane/<version>, or
$` + controlplane.EnvDir + `. The first build takes about 10 minutes on 2 cores;
later runs return at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Controlplane(cmd.Context(), printDir, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&printDir, "print-dir", false,
		`print only the binaries' directory, for export PATH="$(opgen controlplane --print-dir):$PATH"`)
	return cmd
}
