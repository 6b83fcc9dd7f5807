package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

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
			b, err := controlplane.Ensure(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if printDir {
				fmt.Fprintln(out, filepath.Dir(b.Kubectl))
				return nil
			}
			fmt.Fprintf(out, "etcd                     %s\n", b.Etcd)
			fmt.Fprintf(out, "kube-apiserver           %s\n", b.APIServer)
			fmt.Fprintf(out, "kube-controller-manager  %s\n", b.ControllerManager)
			fmt.Fprintf(out, "kubectl                  %s\n", b.Kubectl)
			return nil
		},
	}
	cmd.Flags().BoolVar(&printDir, "print-dir", false,
		`print only the binaries' directory, for export PATH="$(opgen controlplane --print-dir):$PATH"`)
	return cmd
}
