package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Options say what to build.
type Options struct {
	// Name of the operator: the image's title. Required.
	Name string
	// Dir is where go build runs: a directory of the operator's module.
	// Default ".".
	Dir string
	// Main is the main package, as go build takes it. Default ".".
	Main string
	// Platforms are os/arch or os/arch/variant. Default DefaultPlatforms.
	Platforms []string
	// Tags are Go build tags, such as timetzdata.
	Tags []string
	// Labels are added to the config's labels, over the ones Build sets.
	Labels map[string]string
	// Created is the time of every file and config in the image. Default:
	// CreatedFromEnv.
	Created time.Time
	// Progress gets a line per step. Default: none.
	Progress io.Writer
}

// DefaultPlatforms are the platforms Build builds unless told otherwise.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// The image's contract with the manifests: the binary's path and the user
// it runs as, the same as the Dockerfile of `opgen dockerfile`
// (dockerfile.NonRootUID; a test holds them equal).
const (
	Entrypoint = "/operator"
	User       = "65532:65532"
)

// EnvSourceDateEpoch is the variable reproducible builds agree on
// (reproducible-builds.org): seconds since the Unix epoch.
const EnvSourceDateEpoch = "SOURCE_DATE_EPOCH"

// CreatedFromEnv is the time $SOURCE_DATE_EPOCH says, or the Unix epoch:
// never the clock, so that two builds of the same sources are the same.
func CreatedFromEnv() (time.Time, error) {
	s := os.Getenv(EnvSourceDateEpoch)
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("$%s=%q is not a number of seconds: set it to one, such as $(git log -1 --format=%%ct)", EnvSourceDateEpoch, s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// Build compiles the operator for each platform and returns the image
// index of the images. Nothing is written: see WriteLayout, WriteArchive
// and Push.
func Build(ctx context.Context, opts Options) (v1.ImageIndex, error) {
	platforms, err := opts.defaults()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "opgen-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	base, err := baseLayer(opts.Created)
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var annotations map[string]string
	for _, p := range platforms {
		img, labels, err := opts.platformImage(ctx, base, p, work)
		if err != nil {
			return nil, err
		}
		annotations = indexAnnotations(labels)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.Annotations(idx, annotations).(v1.ImageIndex), nil
}

func (o *Options) defaults() ([]v1.Platform, error) {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("image: the operator name is empty: pass --name"))
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.Main == "" {
		o.Main = "."
	}
	if len(o.Platforms) == 0 {
		o.Platforms = DefaultPlatforms
	}
	if o.Created.IsZero() {
		c, err := CreatedFromEnv()
		errs = append(errs, err)
		o.Created = c
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	var platforms []v1.Platform
	for _, s := range o.Platforms {
		p, err := v1.ParsePlatform(s)
		if err != nil || p.OS != "linux" || p.Architecture == "" {
			errs = append(errs, fmt.Errorf("image: platform %q: write linux/ARCH or linux/ARCH/VARIANT, such as linux/arm64", s))
			continue
		}
		platforms = append(platforms, *p)
	}
	return platforms, errors.Join(errs...)
}

// platformImage builds the binary for p and the image around it, and
// returns the image and its labels.
func (o Options) platformImage(ctx context.Context, base v1.Layer, p v1.Platform, work string) (v1.Image, map[string]string, error) {
	bin := filepath.Join(work, strings.Join([]string{p.OS, p.Architecture, p.Variant}, "-"))
	if err := o.buildBinary(ctx, p, bin); err != nil {
		return nil, nil, err
	}
	app, err := binaryLayer(bin, o.Created)
	if err != nil {
		return nil, nil, err
	}
	labels, err := o.labels(bin)
	if err != nil {
		return nil, nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, o.configFile(p, labels))
	if err != nil {
		return nil, nil, err
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: o.history("opgen image: the base (user 65532, CA certificates)")},
		mutate.Addendum{Layer: app, History: o.history("opgen image: the operator binary at " + Entrypoint)},
	)
	if err != nil {
		return nil, nil, err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	return img, labels, nil
}

// buildBinary compiles the main package for p into out, statically and
// without anything that differs from one build of the same sources to the
// next: paths, the VCS stamp, the build ID.
func (o Options) buildBinary(ctx context.Context, p v1.Platform, out string) error {
	start := time.Now()
	args := []string{"build", "-o", out, "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}
	if len(o.Tags) > 0 {
		args = append(args, "-tags", strings.Join(o.Tags, ","))
	}
	args = append(args, o.Main)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("image: go %s for %s: %w\n%s", strings.Join(args, " "), p, err, out)
	}
	fmt.Fprintf(o.Progress, "built %s for %s in %s\n", o.Main, p, time.Since(start).Round(100*time.Millisecond))
	return nil
}

func (o Options) configFile(p v1.Platform, labels map[string]string) *v1.ConfigFile {
	return &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Variant:      p.Variant,
		Created:      v1.Time{Time: o.Created},
		Config: v1.Config{
			Entrypoint: []string{Entrypoint},
			User:       User,
			WorkingDir: "/",
			Labels:     labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
}

func (o Options) history(createdBy string) v1.History {
	return v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: createdBy}
}
