// Command dev is `opgen dev`: a local Kubernetes control plane in the
// foreground until Ctrl-C. opgen builds it on first use (see package
// gen/cli), so that the opgen command itself does not link the control
// plane's clients; it also runs on its own:
//
//	go run github.com/opgen-sdk/opgen/cmd/opgen/dev --kubeconfig .kube/config
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/dev"
	"github.com/opgen-sdk/opgen/cmd/opgen/internal/devcmd"
)

func main() {
	var opts devcmd.Options
	cmd := &cobra.Command{
		Use:           "opgen dev",
		Short:         devcmd.Short,
		Long:          devcmd.Long,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dev.Run(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	devcmd.Register(cmd.Flags(), &opts)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "opgen dev:", err)
		os.Exit(1)
	}
}
