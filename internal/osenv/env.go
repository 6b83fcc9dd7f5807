// Package osenv is the one place for what opgen's parts share with the
// machine they run on: the names of the OPGEN_* environment variables,
// the directories under the user cache, and atomic file writes. It
// imports only the standard library, so the runtime, the generator, the
// CLI and the test environment all use it without linking each other.
//
// The variables users set on an operator are documented by package
// pkg/runtime, which exports them as runtime.EnvWatchNamespace and
// runtime.EnvPodNamespace.
package osenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Environment variables.
const (
	// WatchNamespace lists the namespaces an operator watches,
	// comma-separated, or "all".
	WatchNamespace = "OPGEN_WATCH_NAMESPACE"
	// PodNamespace is the operator's own namespace (from the downward
	// API), where its leader election Lease lives.
	PodNamespace = "OPGEN_POD_NAMESPACE"
	// ControlPlaneDir overrides the directory of the control-plane
	// binaries (default CacheDir("controlplane", <version>)).
	ControlPlaneDir = "OPGEN_CONTROLPLANE_DIR"
	// Replace is the default of opgen init --replace: an opgen checkout
	// the new project uses instead of a released opgen.
	Replace = "OPGEN_REPLACE"
)

// CacheDir returns ${XDG_CACHE_HOME:-$HOME/.cache}/opgen/<elem...> (the
// platform's user cache directory, see os.UserCacheDir). It does not
// create it.
func CacheDir(elem ...string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory: %w", err)
	}
	return filepath.Join(append([]string{cache, "opgen"}, elem...)...), nil
}

// WriteFileAtomic writes data to path with permissions perm, through a
// temporary file in path's directory renamed into place: a reader sees the
// old content or the new, and a failure leaves the old file whole. It
// creates the directory when missing.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
