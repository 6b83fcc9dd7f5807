// Command opgen generates the code of a typed Kubernetes operator from
// annotated Go API types, scaffolds operator projects and runs a local
// control plane to try them on. Run `opgen help` for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
)

// commands maps each subcommand's constructor; main only wires them up.
var commands = []func() *cobra.Command{
	newGenerateCommand,
	newAdoptCommand,
	newCreateCommand,
	newControlplaneCommand,
	newDevCommand,
	newDockerfileCommand,
	newImageCommand,
	newInitCommand,
	newManifestsCommand,
	newRBACCommand,
	newReleaseCommand,
	newUpgradeCommand,
	newVersionCommand,
}

func main() {
	root := newRootCommand()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "opgen:", err)
		os.Exit(1)
	}
}

// newRootCommand is opgen with its commands and its manuals as help
// topics; --version prints cli.DisplayVersion (opgen version says more).
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "opgen",
		Short:         "Code generation and tooling for typed Kubernetes operators",
		Version:       cli.DisplayVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	addTopics(root)
	return root
}
