// Package dev runs a local Kubernetes control plane in the foreground for
// `opgen dev` (package pkg/testenv starts it), with a stand-in kubelet,
// and prints what a user needs to use it.
package dev

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/devcmd"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// Run starts the control plane, prints its kubeconfig and how to use it
// on out, and stops it when ctx is done; progress and the stand-in
// kubelet's errors go to errOut.
func Run(ctx context.Context, opts devcmd.Options, out, errOut io.Writer) error {
	env := testenv.New(testenv.Options{
		ControllerManager: !opts.NoControllerManager,
		CRDDirs:           opts.CRDDirs,
		APIServerPort:     opts.Port,
		Output:            errOut,
	})
	if err := env.Start(ctx); err != nil {
		return err
	}
	defer env.Stop()
	if !opts.NoFakeKubelet {
		if err := env.RunFakeKubelet(ctx, func(err error) { fmt.Fprintln(errOut, "fake kubelet:", err) }); err != nil {
			return err
		}
	}
	if opts.Webhooks != "" {
		if err := webhooks(ctx, env.Config, opts, out); err != nil {
			return err
		}
	}
	path := env.Kubeconfig
	if opts.Kubeconfig != "" {
		if err := copyFile(env.Kubeconfig, opts.Kubeconfig); err != nil {
			return fmt.Errorf("write --kubeconfig: %w", err)
		}
		path, _ = filepath.Abs(opts.Kubeconfig)
	}
	fmt.Fprintf(out, "local control plane ready at %s\n", env.Config.Host)
	fmt.Fprintf(out, "kubeconfig: %s\n\n", path)
	fmt.Fprintf(out, "export KUBECONFIG=%s\n", path)
	fmt.Fprintf(out, "export PATH=%s:$PATH   # for kubectl\n\n", filepath.Dir(env.Binaries.Kubectl))
	if !opts.NoFakeKubelet {
		fmt.Fprintln(out, "No container runs here: a stand-in kubelet reports Pods Running and Ready.")
	}
	if opts.Webhooks != "" {
		fmt.Fprintf(out, "Run the manager with its webhooks on (make run), serving on port %d.\n", opts.WebhookPort)
	}
	fmt.Fprintln(out, "An operator run here (make run) serves /metrics and /healthz, /readyz on free ports;")
	fmt.Fprintln(out, "it logs them on its \"serving\" line (--metrics-bind-address, --health-probe-bind-address fix them).")
	fmt.Fprintln(out, "Press Ctrl-C to stop.")
	<-ctx.Done()
	fmt.Fprintln(out, "stopping")
	return nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}
