package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// workspace holds the tools a run uses and the copies of the projects.
type workspace struct {
	dir string
	// bin holds opgen, controller-gen and code-generator's commands.
	bin string
	// codegen is code-generator's kube_codegen.sh, at the version opgen
	// pins.
	codegen string
	// repo is the opgen checkout the command runs from.
	repo string
}

// referenceTools are the commands the reference scripts call, by module.
var referenceTools = map[string][]string{
	"sigs.k8s.io/controller-tools": {"cmd/controller-gen"},
	"k8s.io/code-generator": {"cmd/client-gen", "cmd/lister-gen", "cmd/informer-gen", "cmd/applyconfiguration-gen",
		"cmd/conversion-gen", "cmd/deepcopy-gen", "cmd/defaulter-gen", "cmd/register-gen"},
}

// newWorkspace builds opgen from the checkout and installs the reference
// tools at the versions the checkout's go.mod pins, so that both sides
// share controller-tools and code-generator.
func newWorkspace(ctx context.Context, dir string) (*workspace, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	ws := &workspace{dir: dir, bin: filepath.Join(dir, "bin"), repo: repo}
	fmt.Fprintf(os.Stderr, "realworld: building opgen and the reference tools into %s\n", ws.bin)
	if _, err := ws.repoCmd(ctx, "build", "-o", filepath.Join(ws.bin, "opgen"), "./cmd/opgen"); err != nil {
		return nil, fmt.Errorf("build opgen: %w", err)
	}
	for module, cmds := range referenceTools {
		version, err := ws.repoCmd(ctx, "list", "-m", "-f", "{{.Version}}", module)
		if err != nil {
			return nil, err
		}
		args := []string{"install"}
		for _, c := range cmds {
			args = append(args, module+"/"+c+"@"+strings.TrimSpace(version))
		}
		if _, err := ws.cmd(ctx, os.TempDir(), "", "go", args...); err != nil {
			return nil, fmt.Errorf("install %s's commands: %w", module, err)
		}
	}
	cgDir, err := ws.repoCmd(ctx, "list", "-m", "-f", "{{.Dir}}", "k8s.io/code-generator")
	if err != nil {
		return nil, err
	}
	ws.codegen = filepath.Join(strings.TrimSpace(cgDir), "kube_codegen.sh")
	return ws, nil
}

// env is the environment of every command: the tools first on PATH, the
// module graph free to grow (generated code may import what go.sum lacks),
// no workspace file, no other Go version.
func (ws *workspace) env() []string {
	return append(os.Environ(),
		"PATH="+ws.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOBIN="+ws.bin, "CODEGEN="+ws.codegen,
		"GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
}

// cmd runs name in dir, logging its output to log (when set), and returns
// its standard output.
func (ws *workspace) cmd(ctx context.Context, dir, log, name string, args ...string) (string, error) {
	_, out, err := ws.measure(ctx, dir, log, name, args...)
	return out, err
}

// repoCmd runs a go command in the opgen checkout, which it must not
// change (no -mod=mod there), and returns its standard output.
func (ws *workspace) repoCmd(ctx context.Context, args ...string) (string, error) {
	c := exec.CommandContext(ctx, "go", args...)
	c.Dir = ws.repo
	c.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 8))
	}
	return strings.TrimSpace(string(out)), nil
}

// usage is what a command cost.
type usage struct {
	wall time.Duration
	rss  int64 // peak resident set, bytes
}

// measure runs a command as cmd does, and reports its wall time and peak
// RSS.
func (ws *workspace) measure(ctx context.Context, dir, log, name string, args ...string) (usage, string, error) {
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = dir
	c.Env = ws.env()
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	u := usage{wall: time.Since(start)}
	if c.ProcessState != nil {
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u.rss = ru.Maxrss * 1024
		}
	}
	if log != "" {
		entry := fmt.Sprintf("$ (cd %s && %s %s)\n%s%s", dir, name, strings.Join(args, " "), stdout.String(), stderr.String())
		if err != nil {
			entry += fmt.Sprintf("=> %v\n", err)
		}
		appendFile(log, entry)
	}
	if err != nil {
		tail := lastLines(stderr.String()+stdout.String(), 8)
		return u, stdout.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail)
	}
	return u, stdout.String(), nil
}

func appendFile(path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(text + "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (ws *workspace) logDir(p project) string { return filepath.Join(ws.dir, p.name, "logs") }

// module downloads p's module and returns its directory in the module
// cache.
func (ws *workspace) module(ctx context.Context, p project) (string, error) {
	out, err := ws.cmd(ctx, os.TempDir(), "", "go", "mod", "download", "-json", p.module+"@"+p.version)
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal([]byte(out), &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("download %s@%s: %s", p.module, p.version, info.Error)
	}
	if err != nil {
		return "", err
	}
	if info.Dir == "" {
		return "", fmt.Errorf("download %s@%s: the go command gave no directory", p.module, p.version)
	}
	return info.Dir, nil
}

// copyTree copies the module at src to dst, writable, without vendor/.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == "vendor" && rel != "." {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// chmodAll makes a tree writable, so that it can be removed (the go
// command leaves read-only files behind).
func chmodAll(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o755)
		}
		return nil
	})
}

// shell runs a script with bash in dir.
func (ws *workspace) shell(ctx context.Context, dir, log, script string) error {
	_, err := ws.cmd(ctx, dir, log, "bash", "-euo", "pipefail", "-c", script)
	return err
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
