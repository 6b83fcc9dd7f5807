package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/pkg/testenv"
)

func newDevCommand() *cobra.Command {
	var (
		crds       []string
		kubeconfig string
		noKCM      bool
		noKubelet  bool
		port       int
	)
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local Kubernetes control plane in the foreground until Ctrl-C",
		Long: `Starts etcd, kube-apiserver and kube-controller-manager on loopback, with
authentication and RBAC on, builds them first when missing, and prints the
kubeconfig to use. Ctrl-C stops everything. There is no kubelet and no
container runs: unless --no-fake-kubelet, a stand-in binds pending Pods to a
fake Node and reports them Running and Ready, so that Deployments become
available and operators that wait for readiness can be tried.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := testenv.New(testenv.Options{
				ControllerManager: !noKCM,
				CRDDirs:           crds,
				APIServerPort:     port,
				Output:            cmd.ErrOrStderr(),
			})
			if err := env.Start(cmd.Context()); err != nil {
				return err
			}
			defer env.Stop()
			if !noKubelet {
				err := env.RunFakeKubelet(cmd.Context(), func(err error) {
					fmt.Fprintln(cmd.ErrOrStderr(), "fake kubelet:", err)
				})
				if err != nil {
					return err
				}
			}
			path := env.Kubeconfig
			if kubeconfig != "" {
				if err := copyFile(env.Kubeconfig, kubeconfig); err != nil {
					return fmt.Errorf("write --kubeconfig: %w", err)
				}
				path, _ = filepath.Abs(kubeconfig)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "local control plane ready at %s\n", env.Config.Host)
			fmt.Fprintf(out, "kubeconfig: %s\n\n", path)
			fmt.Fprintf(out, "export KUBECONFIG=%s\n", path)
			fmt.Fprintf(out, "export PATH=%s:$PATH   # for kubectl\n\n", filepath.Dir(env.Binaries.Kubectl))
			if !noKubelet {
				fmt.Fprintln(out, "No container runs here: a stand-in kubelet reports Pods Running and Ready.")
			}
			fmt.Fprintln(out, "An operator run here (make run) serves /metrics and /healthz, /readyz on free ports;")
			fmt.Fprintln(out, "it logs them on its \"serving\" line (--metrics-bind-address, --health-probe-bind-address fix them).")
			fmt.Fprintln(out, "Press Ctrl-C to stop.")
			<-cmd.Context().Done()
			fmt.Fprintln(out, "stopping")
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&crds, "crds", nil, "directories of CRD manifests to install at start-up")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "also write the kubeconfig to this path")
	cmd.Flags().BoolVar(&noKCM, "no-controller-manager", false, "do not run kube-controller-manager")
	cmd.Flags().IntVar(&port, "port", 0, "apiserver port on 127.0.0.1 (0 picks a free one)")
	cmd.Flags().BoolVar(&noKubelet, "no-fake-kubelet", false, "leave Pods pending instead of reporting them Running and Ready")
	return cmd
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
