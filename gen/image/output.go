package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// WriteLayout writes idx as an OCI image layout into dir: oci-layout,
// index.json naming idx (with refName as its
// org.opencontainers.image.ref.name, when set) and the blobs. The layout
// is written beside dir and then put in its place, so that a failed write
// leaves dir as it was; an existing dir that is not an OCI layout is
// refused, not replaced.
func WriteLayout(dir string, idx v1.ImageIndex, refName string) error {
	if err := replaceable(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := writeLayout(tmp, idx, refName); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

func writeLayout(dir string, idx v1.ImageIndex, refName string) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("image: write the OCI layout: %w", err)
	}
	var opts []layout.Option
	if refName != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": refName}))
	}
	if err := p.AppendIndex(idx, opts...); err != nil {
		return fmt.Errorf("image: write the OCI layout: %w", err)
	}
	return nil
}

// replaceable refuses a dir that exists, is not empty and is not an OCI
// layout: --out pointed at the project by mistake.
func replaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		return fmt.Errorf("image: %s exists and is not an OCI layout: choose another output, or remove it", dir)
	}
	return nil
}

// WriteArchive writes idx as an OCI image layout in one tar file at path,
// the form podman load and skopeo's oci-archive: read. Its entries are
// sorted and carry the Unix epoch, so that the file depends on idx alone.
func WriteArchive(path string, idx v1.ImageIndex, refName string) error {
	tmp, err := os.MkdirTemp("", "opgen-image-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := writeLayout(tmp, idx, refName); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := tarDir(f, tmp); err != nil {
		f.Close()
		return fmt.Errorf("image: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// tarDir writes the files under dir into w, in lexical order (WalkDir's).
func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if d.IsDir() {
			h.Name, h.Mode, h.Typeflag = h.Name+"/", 0o755, tar.TypeDir
			return tw.WriteHeader(h)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// Push pushes idx to the tag ref with the credentials of the usual places
// (authn.DefaultKeychain: the Docker config and its credential helpers)
// and returns the reference by digest, tag kept for the reader:
// registry.example.com/widget-operator:v0.1.0@sha256:....
func Push(ctx context.Context, idx v1.ImageIndex, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("image: --push %q: %w: write a reference such as registry.example.com/widget-operator:v0.1.0", ref, err)
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("image: push %s: %w", tag, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return tag.String() + "@" + d.String(), nil
}
