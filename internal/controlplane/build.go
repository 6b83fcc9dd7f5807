package controlplane

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Ensure returns the control-plane binaries, building them first when any is
// missing. Progress goes to out. Concurrent callers, in this process or
// others, wait for one build instead of running their own.
func Ensure(ctx context.Context, out io.Writer) (Binaries, error) {
	dir, err := Dir()
	if err != nil {
		return Binaries{}, err
	}
	b := In(dir)
	if len(b.Missing()) == 0 {
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("cannot create the control-plane directory: %w; set %s to a writable directory", err, EnvDir)
	}
	unlock, err := lock(ctx, filepath.Join(dir, ".build.lock"), out)
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	if len(b.Missing()) == 0 { // another process built them while we waited
		return b, nil
	}
	start := time.Now()
	fmt.Fprintf(out, "building the local control plane (Kubernetes %s, etcd %s) into %s\n", Pinned().Kubernetes, Pinned().Etcd, dir)
	fmt.Fprintf(out, "this happens once per version and takes about 10 minutes on 2 cores\n")
	if err := build(ctx, dir, out); err != nil {
		return Binaries{}, err
	}
	fmt.Fprintf(out, "control plane built in %s\n", time.Since(start).Round(time.Second))
	return b, b.Check()
}

// lock takes an exclusive flock on path, waiting for other holders: it
// says so on out at once and every minute, and gives up when ctx ends.
func lock(ctx context.Context, path string, out io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create the build lock: %w; set %s to a writable directory", err, EnvDir)
	}
	start, told := time.Now(), time.Time{}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Since(told) >= time.Minute {
			fmt.Fprintf(out, "waiting for another process to finish building the control plane (it holds %s; waited %s so far)\n",
				path, time.Since(start).Round(time.Second))
			told = time.Now()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("gave up waiting for another process's control-plane build (lock %s): %w", path, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it anyway
		f.Close()
	}, nil
}

// target is one `go build` invocation: a module and the main packages in it.
type target struct {
	module   string // directory name under src/
	packages []string
	ldflags  string
}

func targets() []target {
	v := Pinned().Kubernetes
	minor := strings.Split(strings.TrimPrefix(v, "v"), ".")[1]
	pkg := "k8s.io/component-base/version."
	return []target{
		{
			module: "kube",
			packages: []string{
				"k8s.io/kubernetes/cmd/kube-apiserver",
				"k8s.io/kubernetes/cmd/kube-controller-manager",
				"k8s.io/kubernetes/cmd/kubectl",
			},
			// Without these the servers report v0.0.0-master.
			ldflags: fmt.Sprintf("-s -w -X %sgitVersion=%s -X %sgitMajor=1 -X %sgitMinor=%s -X %sgitTreeState=clean",
				pkg, v, pkg, pkg, minor, pkg),
		},
		{module: "etcd", packages: []string{"."}, ldflags: "-s -w"},
	}
}

func build(ctx context.Context, dir string, out io.Writer) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is not on PATH (%w); install Go 1.26 or newer to build the control plane", err)
	}
	src := filepath.Join(dir, "src")
	if err := materialize(src); err != nil {
		return fmt.Errorf("write the control-plane build module to %s: %w", src, err)
	}
	staging, err := os.MkdirTemp(dir, ".staging-")
	if err != nil {
		return fmt.Errorf("cannot write to %s: %w; set %s to a writable directory", dir, err, EnvDir)
	}
	defer os.RemoveAll(staging)
	for _, t := range targets() {
		if err := t.run(ctx, goBin, filepath.Join(src, t.module), staging, out); err != nil {
			return err
		}
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"} {
		if err := os.Rename(filepath.Join(staging, name), filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("install %s: %w", name, err)
		}
	}
	return nil
}

// materialize writes the embedded module files as two buildable modules.
func materialize(src string) error {
	files := map[string]string{
		"module/kube.go.mod":      "kube/go.mod",
		"module/kube.go.sum":      "kube/go.sum",
		"module/tools.go.txt":     "kube/tools.go",
		"module/etcd.go.mod":      "etcd/go.mod",
		"module/etcd.go.sum":      "etcd/go.sum",
		"module/etcd_main.go.txt": "etcd/main.go",
	}
	for from, to := range files {
		data, err := moduleFS.ReadFile(from)
		if err != nil {
			return err
		}
		path := filepath.Join(src, to)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (t target) run(ctx context.Context, goBin, moduleDir, outDir string, out io.Writer) error {
	total := t.countPackages(ctx, goBin, moduleDir)
	args := append([]string{"build", "-v", "-trimpath", "-ldflags", t.ldflags, "-o", outDir + string(os.PathSeparator)}, t.packages...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = moduleDir
	cmd.Env = buildEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start go build: %w", err)
	}
	tail := progress(stderr, out, t.module, total)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("go build of the %s control-plane module failed: %w\n%s", t.module, err, tail())
	}
	return nil
}

// countPackages lists the dependencies to build so progress can show a
// fraction. It returns 0 when listing fails; the build reports the error.
func (t target) countPackages(ctx context.Context, goBin, moduleDir string) int {
	cmd := exec.CommandContext(ctx, goBin, append([]string{"list", "-deps"}, t.packages...)...)
	cmd.Dir = moduleDir
	cmd.Env = buildEnv()
	data, err := cmd.Output()
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte("\n"))
}

func buildEnv() []string {
	// The build must not follow the caller's module settings: a workspace or
	// -mod=vendor from the environment would break the pinned modules.
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0")
}

// progress reads `go build -v` output (one line per compiled package) and
// prints a line every 10 seconds. It returns a func giving the last lines,
// for error messages.
func progress(r io.Reader, out io.Writer, module string, total int) func() string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var (
		last    []string
		n       int
		start   = time.Now()
		ticker  = time.NewTicker(10 * time.Second)
		pending = true
	)
	defer ticker.Stop()
	for pending {
		select {
		case l, ok := <-lines:
			if !ok {
				pending = false
				break
			}
			n++
			last = append(last, l)
			if len(last) > 40 {
				last = last[1:]
			}
		case <-ticker.C:
			if total > 0 {
				fmt.Fprintf(out, "  %s: %d of at most %d packages compiled (%s)\n", module, n, total, time.Since(start).Round(time.Second))
			} else {
				fmt.Fprintf(out, "  %s: %d packages compiled (%s)\n", module, n, time.Since(start).Round(time.Second))
			}
		}
	}
	fmt.Fprintf(out, "  %s: done, %d packages compiled in %s\n", module, n, time.Since(start).Round(time.Second))
	return func() string { return strings.Join(last, "\n") }
}
