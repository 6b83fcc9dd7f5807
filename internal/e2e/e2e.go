// Package e2e runs the example operators end to end in tests: it installs an
// operator's generated manifest into a local control plane and runs the
// operator in-process as its own ServiceAccount, so that RBAC the generator
// failed to grant fails the test.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/gen/manifest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// Operator is an example operator installed in an environment.
type Operator struct {
	// Name is the operator's name, as in its generated RBAC.
	Name string
	// Namespace holds its ServiceAccount and Lease.
	Namespace string
	// Config authenticates as its ServiceAccount.
	Config *rest.Config
	// Manifest is the applied manifest (without a Deployment).
	Manifest []byte
}

// Install applies the manifest `opgen manifests` builds from configDir,
// without a Deployment, with `kubectl apply --server-side`, and returns a
// config for the operator's ServiceAccount.
func Install(ctx context.Context, env *testenv.Environment, name, configDir string) (*Operator, error) {
	op := &Operator{Name: name, Namespace: name + "-system"}
	data, err := manifest.Build(manifest.Options{Name: name, Namespace: op.Namespace, ConfigDir: configDir})
	if err != nil {
		return nil, err
	}
	op.Manifest = data
	path := filepath.Join(env.Dir, name+"-manifest.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig,
		"apply", "--server-side", "--force-conflicts", "-f", path).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("apply the %s manifest: %w\n%s", name, err, out)
	}
	op.Config, err = env.ServiceAccountConfig(ctx, op.Namespace, name)
	return op, err
}

// Options returns runtime options for running the operator in a test: its
// name, leader election in its namespace with short timings, no servers.
func (o *Operator) Options(log logr.Logger) runtime.Options {
	return runtime.Options{
		Name:        o.Name,
		MetricsAddr: "0",
		HealthAddr:  "0",
		Logger:      log,
		LeaderElection: runtime.LeaderElectionOptions{
			Namespace:     o.Namespace,
			LeaseDuration: 4 * time.Second,
			RenewDeadline: 3 * time.Second,
			RetryPeriod:   500 * time.Millisecond,
		},
	}
}

// Run builds the operator as its ServiceAccount, calls setup and runs it
// until the returned stop is called; stop waits for Run to return and
// reports its error.
func (o *Operator) Run(opts runtime.Options, setup func(*runtime.Operator) error) (stop func() error, err error) {
	op, err := runtime.New(o.Config, opts)
	if err != nil {
		return nil, err
	}
	if err := setup(op); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	return func() error { cancel(); return <-done }, nil
}

// Eventually polls cond every 50ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DryRun runs `kubectl apply --dry-run=server` on the manifest at path and
// returns kubectl's output: the real API server checks every object against
// its schema and admission and creates nothing.
func DryRun(ctx context.Context, env *testenv.Environment, path string) (string, error) {
	out, err := exec.CommandContext(ctx, env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig,
		"apply", "--dry-run=server", "-f", path).CombinedOutput()
	return string(out), err
}
