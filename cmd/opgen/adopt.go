package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

func newAdoptCommand() *cobra.Command {
	var opts cli.AdoptOptions
	cmd := &cobra.Command{
		Use:   "adopt",
		Short: "Turn a kubebuilder v4 project's generation over to opgen, keeping its types, controllers and config/",
		Long: `Run at the root of a kubebuilder v4 project (where PROJECT is). It reads
PROJECT, records opgen as a tool in go.mod (then go mod tidy), runs
opgen generate --layout kubebuilder, and rewrites the Makefile's manifests
and generate targets to run that command instead of controller-gen (whose
download target goes when nothing else uses it). It prints every change.

The manifests stay where kubebuilder keeps them and come out as
controller-gen wrote them, apart from the header and controller-gen's
version annotation: the CRDs in config/crd/bases, the ClusterRole
manager-role in config/rbac/role.yaml, the webhook configurations in
config/webhook/manifests.yaml. The deep copies get opgen's header.

Then move controllers over one at a time: opgen help migrating, "From
kubebuilder".`,
		Example: `  (cd opgen && go install ./cmd/opgen)   # in the parent of a clone of opgen
  cd my-operator && opgen adopt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Adopt(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Dir, "dir", "C", ".", "the kubebuilder project's root, where PROJECT is")
	f.StringVar(&opts.Replace, "replace", os.Getenv(osenv.Replace),
		"use this opgen checkout instead of a released opgen (default $"+osenv.Replace+", else the checkout this opgen was built from, if any)")
	return cmd
}
