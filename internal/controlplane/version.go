package controlplane

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// EnvDir names the environment variable that overrides the directory the
// binaries are built into and read from.
const EnvDir = osenv.ControlPlaneDir

//go:embed module
var moduleFS embed.FS

// Versions of the pinned control plane, read from the embedded module files.
type Versions struct {
	// Kubernetes is the k8s.io/kubernetes version, for example v1.37.1.
	Kubernetes string
	// Etcd is the go.etcd.io/etcd/server/v3 version, for example v3.6.16.
	Etcd string
}

// String is the cache key: both versions, so a bump of either rebuilds.
func (v Versions) String() string { return v.Kubernetes + "-etcd-" + v.Etcd }

var pinned = sync.OnceValues(readVersions)

// Pinned returns the versions hack/controlplane pins.
func Pinned() Versions {
	v, err := pinned()
	if err != nil {
		// The module files are embedded at build time and checked by tests;
		// failing to parse them is a broken build of opgen itself.
		panic(err)
	}
	return v
}

func readVersions() (Versions, error) {
	kube, err := requiredVersion("module/kube.go.mod", "k8s.io/kubernetes")
	if err != nil {
		return Versions{}, err
	}
	etcd, err := requiredVersion("module/etcd.go.mod", "go.etcd.io/etcd/server/v3")
	if err != nil {
		return Versions{}, err
	}
	return Versions{Kubernetes: kube, Etcd: etcd}, nil
}

func requiredVersion(file, modulePath string) (string, error) {
	data, err := moduleFS.ReadFile(file)
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax(file, data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Mod.Path == modulePath {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", file, modulePath)
}

// Dir returns the directory holding the binaries: $OPGEN_CONTROLPLANE_DIR when
// set, else ${XDG_CACHE_HOME:-$HOME/.cache}/opgen/controlplane/<version>.
func Dir() (string, error) {
	if d := strings.TrimSpace(os.Getenv(EnvDir)); d != "" {
		return filepath.Abs(d)
	}
	dir, err := osenv.CacheDir("controlplane", Pinned().String())
	if err != nil {
		return "", fmt.Errorf("%w; set %s to a writable directory for the control-plane binaries", err, EnvDir)
	}
	return dir, nil
}

// Binaries are the absolute paths of the control-plane executables.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
	Kubectl           string
}

// In returns the binary paths inside dir.
func In(dir string) Binaries {
	return Binaries{
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Kubectl:           filepath.Join(dir, "kubectl"),
	}
}

func (b Binaries) all() []string {
	return []string{b.Etcd, b.APIServer, b.ControllerManager, b.Kubectl}
}

// Missing returns the binaries that do not exist as executable files.
func (b Binaries) Missing() []string {
	var missing []string
	for _, p := range b.all() {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	return missing
}

// Check returns an error naming every missing binary and how to get it.
func (b Binaries) Check() error {
	missing := b.Missing()
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("control-plane binaries missing: %s; run `make controlplane` (or `opgen controlplane`) to build them, or point %s at a directory that has them",
		strings.Join(missing, ", "), EnvDir)
}
