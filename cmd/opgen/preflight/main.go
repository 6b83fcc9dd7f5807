// Command preflight is the check behind `opgen release --live`: it reads
// the objects of the current cluster (read only) and asks a scratch API
// server of its own, opgen's local control plane, which of them the
// release's CRDs would refuse (package gen/compat/preflight). opgen builds
// it on first use, as it builds opgen dev, so that the opgen command does
// not link the control plane's clients. It runs on its own too:
//
//	go run github.com/opgen-sdk/opgen/cmd/opgen/preflight --crds config/crd
//
// It exits 1 when an object is refused, 2 when the check fails.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/compat/preflight"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

func main() {
	var crdDir, kubeconfig, kubeContext string
	cmd := &cobra.Command{
		Use:   "preflight --crds DIR",
		Short: "Report which objects of the current cluster the CRDs of DIR would refuse, ratcheting included",
		Args:  cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), crdDir, kubeconfig, kubeContext)
		},
	}
	f := cmd.Flags()
	f.StringVar(&crdDir, "crds", "", "directory of the release's CRD manifests (*.yaml, one CRD each)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&kubeContext, "context", "", "context of the kubeconfig (default: its current context)")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.ExecuteContext(ctx); err != nil {
		if err == errRefused {
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "opgen preflight: %v\n", err)
		os.Exit(2)
	}
}

var errRefused = fmt.Errorf("objects refused")

func run(ctx context.Context, crdDir, kubeconfig, kubeContext string) error {
	crds, err := readCRDs(crdDir)
	if err != nil {
		return err
	}
	cluster, err := clusterConfig(kubeconfig, kubeContext)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "opgen: preflight against %s: starting a scratch API server\n", cluster.Host)
	scratch := testenv.New(testenv.Options{Private: true, Output: os.Stderr})
	if err := scratch.Start(ctx); err != nil {
		return fmt.Errorf("start the scratch API server: %w", err)
	}
	defer scratch.Stop()
	report, err := preflight.Check(ctx, preflight.Options{Cluster: cluster, Scratch: scratch.Config, CRDs: crds})
	if err != nil {
		return err
	}
	report.Print(os.Stdout)
	if report.Refused() {
		return errRefused
	}
	return nil
}

func clusterConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the cluster to check: %w: set KUBECONFIG, or pass --kubeconfig and --context", err)
	}
	return cfg, nil
}

func readCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("--crds %q: no *.yaml there", dir)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if crd.Kind == "CustomResourceDefinition" {
			out = append(out, crd)
		}
	}
	return out, nil
}
