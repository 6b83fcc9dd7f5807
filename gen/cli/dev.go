package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// DevPackage is the command behind `opgen dev`. The local control plane
// it runs links client-go's clientsets and the test environment, 300
// packages the rest of opgen does not need, so that the opgen a project
// builds with `go tool opgen` would take twice as long to build for the
// first time; it is a command of its own, built on first use.
const DevPackage = "github.com/opgen-sdk/opgen/cmd/opgen/dev"

// Dev runs DevPackage with args. It builds it in the module of the
// working directory, which requires opgen (go build reuses its previous
// build when nothing changed), or, outside such a module, installs the
// version of the running opgen; then it runs it in the place of the
// running process where the system allows, so that signals reach it.
func Dev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	bin, err := buildDev(ctx, stderr)
	if err != nil {
		return err
	}
	return execDev(bin, args, stdout, stderr)
}

// buildDev builds DevPackage into the user cache directory and returns
// the binary.
func buildDev(ctx context.Context, progress io.Writer) (string, error) {
	return buildHelper(ctx, DevPackage, progress)
}

// buildHelper builds a command of opgen's module that the opgen command
// runs but does not link (opgen dev, the preflight of opgen release
// --live) into the user cache directory, and returns the binary.
func buildHelper(ctx context.Context, pkg string, progress io.Writer) (string, error) {
	dir, err := osenv.CacheDir("bin")
	if err != nil {
		return "", err
	}
	name := path.Base(pkg)
	bin := filepath.Join(dir, "opgen-"+name)
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintln(progress, "opgen: building opgen "+name+", once (go build "+pkg+")")
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if build.Run() == nil {
		return bin, nil
	}
	version := BuildVersion()
	if version == "" || version == "(devel)" {
		return "", fmt.Errorf("build %s: %s: run opgen from the directory of a module that requires github.com/opgen-sdk/opgen (opgen init writes one; opgen help generate-manual, under Setting it up, adds opgen to yours)", pkg, strings.TrimSpace(out.String()))
	}
	// Outside a module that requires opgen: the running opgen's version.
	gobin := filepath.Join(dir, version)
	install := exec.CommandContext(ctx, "go", "install", pkg+"@"+version)
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if msg, err := install.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w: %s", pkg, version, err, strings.TrimSpace(string(msg)))
	}
	return filepath.Join(gobin, name), nil
}
