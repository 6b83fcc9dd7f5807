package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/image"
)

// DefaultImageOut is where opgen image writes the OCI layout when it
// pushes nowhere.
const DefaultImageOut = "bin/image"

// ImageOptions are opgen image's: the build's, and where the image goes.
type ImageOptions struct {
	image.Options
	// Out is an OCI layout directory, or a tar file of one when it ends in
	// .tar. Default DefaultImageOut, or nothing when Push is set.
	Out string
	// Push is the tag to push to, such as
	// registry.example.com/widget-operator:v0.1.0.
	Push string
	// LabelFlags are k=v, one label each.
	LabelFlags []string
}

// Image builds the operator's image and writes it to opts.Out, pushes it
// to opts.Push, or both. It prints the image's reference by digest on w
// (the pushed one, or the bare digest), and what it does on progress.
func Image(ctx context.Context, opts ImageOptions, w, progress io.Writer) error {
	if err := opts.parse(); err != nil {
		return err
	}
	opts.Progress = progress
	idx, err := image.Build(ctx, opts.Options)
	if err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	ref := d.String()
	if opts.Out != "" {
		if err := writeImage(opts.Out, idx, opts.Push); err != nil {
			return err
		}
		fmt.Fprintf(progress, "wrote %s (%s)\n", opts.Out, d)
	}
	if opts.Push != "" {
		if ref, err = image.Push(ctx, idx, opts.Push); err != nil {
			return err
		}
		fmt.Fprintf(progress, "pushed %s\n", opts.Push)
	}
	fmt.Fprintln(w, ref)
	return nil
}

func writeImage(out string, idx v1.ImageIndex, refName string) error {
	if strings.HasSuffix(out, ".tar") {
		return image.WriteArchive(out, idx, refName)
	}
	return image.WriteLayout(out, idx, refName)
}

func (o *ImageOptions) parse() error {
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.Name == "" {
		name, err := gen.ProjectName(o.Dir)
		if err != nil {
			return err
		}
		o.Name = name
	}
	if o.Out == "" && o.Push == "" {
		o.Out = DefaultImageOut
	}
	o.Labels = map[string]string{}
	for _, kv := range o.LabelFlags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--label %q is not key=value: write one label per flag, such as --label org.opencontainers.image.revision=$(git rev-parse HEAD)", kv)
		}
		o.Labels[k] = v
	}
	return nil
}
