package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/opgen-sdk/opgen/gen/dockerfile"
	"github.com/opgen-sdk/opgen/internal/controlplane"
)

// Dockerfile writes the operator's Dockerfile to the file out, or to w
// when out is "-"; an existing file is kept unless force.
func Dockerfile(opts dockerfile.Options, out string, force bool, w io.Writer) error {
	data, err := dockerfile.Build(opts)
	if err != nil {
		return err
	}
	if out != "-" && !force {
		if _, err := os.Stat(out); err == nil {
			return fmt.Errorf("%s exists and may have your edits: pass --force to overwrite it, or -o - to print", out)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return writeOutput(w, out, data)
}

// PinnedModules are the dependencies whose versions decide what opgen
// generates and which Kubernetes it speaks to; Version reports them.
var PinnedModules = []struct{ Label, Path string }{
	{"kubernetes (k8s.io/api)", "k8s.io/api"},
	{"apimachinery", "k8s.io/apimachinery"},
	{"controller-tools", "sigs.k8s.io/controller-tools"},
	{"code-generator", "k8s.io/code-generator"},
}

// Version prints opgen's module version, the Go version and the versions
// of PinnedModules, from the binary's build information.
func Version(w io.Writer) {
	opgen, goVersion := DisplayVersion(), "unknown"
	deps := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			deps[d.Path] = d.Version
		}
	}
	fmt.Fprintf(w, "%-24s %s\n", "opgen", opgen)
	fmt.Fprintf(w, "%-24s %s\n", "go", goVersion)
	for _, m := range PinnedModules {
		v := deps[m.Path]
		if v == "" {
			v = "unknown (not in the build information)"
		}
		fmt.Fprintf(w, "%-24s %s\n", m.Label, v)
	}
}

// Controlplane builds the local control plane's binaries when missing,
// reporting the build on progress, and prints where they are on w: each
// binary, or with dirOnly their directory.
func Controlplane(ctx context.Context, dirOnly bool, w, progress io.Writer) error {
	b, err := controlplane.Ensure(ctx, progress)
	if err != nil {
		return err
	}
	if dirOnly {
		fmt.Fprintln(w, filepath.Dir(b.Kubectl))
		return nil
	}
	fmt.Fprintf(w, "etcd                     %s\n", b.Etcd)
	fmt.Fprintf(w, "kube-apiserver           %s\n", b.APIServer)
	fmt.Fprintf(w, "kube-controller-manager  %s\n", b.ControllerManager)
	fmt.Fprintf(w, "kubectl                  %s\n", b.Kubectl)
	return nil
}

// DisplayVersion is the version opgen --version prints: the module
// version the binary was built with (a release, or the pseudo-version go
// install stamps in a clone), else the VCS revision it was built from,
// else "(devel)".
func DisplayVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return displayVersion(bi)
}

func displayVersion(bi *debug.BuildInfo) string {
	if bi == nil {
		return "(devel)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return "(devel)"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified == "true" {
		revision += "-dirty"
	}
	return "(devel) " + revision
}
