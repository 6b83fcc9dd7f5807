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
)

func main() {
	var opts dev.Options
	cmd := &cobra.Command{
		Use:   "opgen dev",
		Short: "Run a local Kubernetes control plane in the foreground until Ctrl-C",
		Long: `Starts etcd, kube-apiserver and kube-controller-manager on loopback, with
authentication and RBAC on, builds them first when missing, and prints the
kubeconfig to use. Ctrl-C stops everything. There is no kubelet and no
container runs: unless --no-fake-kubelet, a stand-in binds pending Pods to a
fake Node and reports them Running and Ready, so that Deployments become
available and operators that wait for readiness can be tried.

With --webhooks, a kubebuilder project's webhooks run too: the API server
calls the manager's webhook server on 127.0.0.1 (make run), with a
certificate opgen dev writes where controller-runtime reads it; the kinds
PROJECT gives a conversion webhook convert through it.

It writes: the kubeconfig (and a copy at --kubeconfig), the control
plane's data in a temporary directory removed at the end, and with
--webhooks the certificate in --webhook-cert-dir.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dev.Run(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.CRDDirs, "crds", nil, "directories of CRD manifests to install at start-up")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "also write the kubeconfig to this path")
	f.BoolVar(&opts.NoControllerManager, "no-controller-manager", false, "do not run kube-controller-manager")
	f.IntVar(&opts.Port, "port", 0, "apiserver port on 127.0.0.1 (0 picks a free one)")
	f.BoolVar(&opts.NoFakeKubelet, "no-fake-kubelet", false, "leave Pods pending instead of reporting them Running and Ready")
	f.StringVar(&opts.Webhooks, "webhooks", "", "a file of webhook configurations to create (config/webhook/manifests.yaml), each calling the project's own webhook server on 127.0.0.1 (make run) in the place of its Service")
	f.IntVar(&opts.WebhookPort, "webhook-port", 9443, "the port of the project's webhook server (controller-runtime's default)")
	f.StringVar(&opts.WebhookCertDir, "webhook-cert-dir", dev.DefaultWebhookCertDir, "where to write the webhook server's certificate for 127.0.0.1 (tls.crt, tls.key): controller-runtime reads it here by default")
	f.StringVar(&opts.Project, "project", "PROJECT", "kubebuilder's PROJECT file: its kinds with a conversion webhook get it in their CRDs, calling the same server (with --webhooks)")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "opgen dev:", err)
		os.Exit(1)
	}
}
