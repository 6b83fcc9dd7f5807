package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/devcmd"
	"github.com/opgen-sdk/opgen/gen/cli"
)

// newDevCommand is opgen dev, whose flags are its own command's
// (cmd/opgen/dev), built on first use: they pass through unparsed. The
// flags are defined here too (package devcmd), for --help only, so that
// opgen dev --help prints them anywhere without building anything.
func newDevCommand() *cobra.Command {
	var unused devcmd.Options
	cmd := &cobra.Command{
		Use:   "dev [flags]",
		Short: devcmd.Short,
		Long: devcmd.Long + `

The control plane is the command ` + cli.DevPackage + `,
which opgen builds the first time (in the module of the current directory,
or the version of this opgen) and then runs.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if devcmd.WantsHelp(args) {
				return cmd.Help()
			}
			return cli.Dev(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	devcmd.Register(cmd.Flags(), &unused)
	return cmd
}
