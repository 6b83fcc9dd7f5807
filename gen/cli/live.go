package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// PreflightPackage is the command behind opgen release --live. It links
// the local control plane, which the opgen command does not: opgen builds
// it on first use, as it builds opgen dev.
const PreflightPackage = "github.com/opgen-sdk/opgen/cmd/opgen/preflight"

// LiveOptions name the cluster opgen release --live checks.
type LiveOptions struct {
	// Kubeconfig and Context name the cluster; empty: $KUBECONFIG, then
	// ~/.kube/config, and its current context.
	Kubeconfig, Context string
}

// Preflight runs PreflightPackage on the CRD manifests files (by base
// name): it prints on out what the cluster holds that they would refuse,
// and reports whether any object is refused.
func Preflight(ctx context.Context, files map[string][]byte, opts LiveOptions, out, errOut io.Writer) (refused bool, err error) {
	bin, err := buildHelper(ctx, PreflightPackage, errOut)
	if err != nil {
		return false, err
	}
	dir, err := os.MkdirTemp("", "opgen-preflight-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return false, err
		}
	}
	args := []string{"--crds", dir}
	if opts.Kubeconfig != "" {
		args = append(args, "--kubeconfig", opts.Kubeconfig)
	}
	if opts.Context != "" {
		args = append(args, "--context", opts.Context)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = out, errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return true, nil
	}
	return false, err
}
