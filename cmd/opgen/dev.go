package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
)

// newDevCommand is opgen dev, whose flags are its own command's
// (cmd/opgen/dev), built on first use: they pass through unparsed.
func newDevCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "dev [flags]",
		Short: "Run a local Kubernetes control plane in the foreground until Ctrl-C",
		Long: `Starts etcd, kube-apiserver and kube-controller-manager on loopback, with
authentication and RBAC on, and a stand-in kubelet, and prints the
kubeconfig to use; Ctrl-C stops everything. It is the command
` + cli.DevPackage + `, which opgen builds the first time
(in the module of the current directory) and then runs: opgen dev --help
lists its flags (--crds, --kubeconfig, --port, --no-controller-manager,
--no-fake-kubelet).`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Dev(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}
