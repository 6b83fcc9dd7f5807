package main

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opgen-sdk/opgen/gen/image"
)

// benchBinary measures what each operator costs on disk and in a
// registry: its binary as the harness builds it (go build, no flags), and
// its container image as `opgen image` builds it (a static, stripped
// binary on opgen's minimal base, linux on this machine's architecture),
// the compressed bytes a node pulls. Both operators go through the same
// image build, so the base is the same and the difference is the binary.
// Sizes do not move from run to run; one measurement each.
func (s *suite) benchBinary(ctx context.Context) error {
	for _, fw := range []string{opgen, cr} {
		fi, err := os.Stat(s.bins[fw])
		if err != nil {
			return err
		}
		s.res.add("binary.bytes", fw, float64(fi.Size()))
		pulled, binary, err := s.imageSize(ctx, fw)
		if err != nil {
			return fmt.Errorf("image of %s: %w", fw, err)
		}
		s.res.add("image.bytes", fw, float64(pulled))
		s.res.add("image.binary.bytes", fw, float64(binary))
	}
	return nil
}

// imageSize builds the image of framework fw's operator and returns the
// bytes a pull transfers (manifest, config and compressed layers) and the
// size of the binary in it (the top layer, uncompressed).
func (s *suite) imageSize(ctx context.Context, fw string) (pulled, binary int64, err error) {
	main := map[string]string{opgen: "./operator/opgen", cr: "./operator/cr"}[fw]
	logf("building the image of the %s operator (go build for linux/%s)", fw, goruntime.GOARCH)
	idx, err := image.Build(ctx, image.Options{Name: "bench-" + fw, Dir: s.moduleDir, Main: main,
		Platforms: []string{"linux/" + goruntime.GOARCH}, Created: time.Unix(0, 0)})
	if err != nil {
		return 0, 0, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return 0, 0, err
	}
	if len(im.Manifests) != 1 {
		return 0, 0, fmt.Errorf("the image index has %d manifests, want 1", len(im.Manifests))
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		return 0, 0, err
	}
	return pullSize(img)
}

func pullSize(img v1.Image) (pulled, binary int64, err error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return 0, 0, err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return 0, 0, err
	}
	pulled = int64(len(manifest) + len(config))
	layers, err := img.Layers()
	if err != nil {
		return 0, 0, err
	}
	for i, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, 0, err
		}
		pulled += n
		if i == len(layers)-1 { // the binary's layer, over the base
			rc, err := l.Uncompressed()
			if err != nil {
				return 0, 0, err
			}
			binary, err = countTar(rc)
			if err != nil {
				return 0, 0, err
			}
		}
	}
	return pulled, binary, nil
}

// countTar returns the bytes of the regular files in the tar stream r, and
// closes it.
func countTar(r io.ReadCloser) (int64, error) {
	defer r.Close()
	tr := tar.NewReader(r)
	var n int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		if h.Typeflag == tar.TypeReg {
			n += h.Size
		}
	}
}
