package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opgen-sdk/opgen/gen/image"
)

// operatorBinary builds hello-operator's image as `opgen image` does, for
// this machine's architecture (make image builds amd64 and arm64), and
// returns its binary, taken out of the image: the demo runs what the image
// holds. Off Linux, where that binary does not run, it builds one with go
// build instead.
func (d *demo) operatorBinary(ctx context.Context) (string, error) {
	bin := filepath.Join(d.work, operatorName)
	if goruntime.GOOS != "linux" {
		step("Building hello-operator (go build; the image's Linux binary would not run on " + goruntime.GOOS + ")")
		return bin, goBuild(ctx, d.dir, bin)
	}
	platform := "linux/" + goruntime.GOARCH
	step("Building hello-operator's container image without Docker, as opgen image does: a static binary on a base opgen writes (user 65532, CA certificates), no base image pulled")
	note("the first build compiles every package with -trimpath: minutes once, seconds afterwards")
	start := time.Now()
	idx, err := image.Build(ctx, image.Options{Name: operatorName, Dir: d.dir, Platforms: []string{platform}, Progress: indented{}})
	if err != nil {
		return "", err
	}
	layout := filepath.Join(d.work, "image")
	if err := image.WriteLayout(layout, idx, ""); err != nil {
		return "", err
	}
	digest, err := idx.Digest()
	if err != nil {
		return "", err
	}
	fmt.Printf("    $ opgen image --platform %s --out image   # %s\n", platform, time.Since(start).Round(100*time.Millisecond))
	fmt.Printf("      %s\n", digest)
	if err := describe(idx, bin); err != nil {
		return "", err
	}
	version, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("the image's binary: %s --version: %w: %s", bin, err, version)
	}
	fmt.Printf("    $ hello-operator --version   # the binary taken out of the image\n%s", indent(string(version)))
	fmt.Printf("    pushed with --push registry.example.com/hello-operator:v0.1.0, it deploys by digest:\n")
	fmt.Printf("    $ opgen manifests --image registry.example.com/hello-operator:v0.1.0@%s\n", digest)
	return bin, nil
}

// describe prints the image's user, entrypoint and size, and writes its
// binary to bin.
func describe(idx v1.ImageIndex, bin string) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	var layers int64
	ls, _ := img.Layers()
	for _, l := range ls {
		s, _ := l.Size()
		layers += s
	}
	fmt.Printf("      user %s, entrypoint %s, %d layers, %.1f MiB compressed\n",
		cf.Config.User, strings.Join(cf.Config.Entrypoint, " "), len(ls), float64(layers)/(1<<20))
	return extract(img, strings.TrimPrefix(image.Entrypoint, "/"), bin)
}

// extract writes the file name of img's file system to path.
func extract(img v1.Image, name, path string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("no %s in the image", name)
		}
		if err != nil {
			return err
		}
		if h.Name != name {
			continue
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// indented prints the build's progress lines under the step.
type indented struct{}

func (indented) Write(p []byte) (int, error) {
	fmt.Print(indent(string(p)))
	return len(p), nil
}
