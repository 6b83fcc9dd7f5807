// Package image builds an operator's container image without a container
// engine: the static Go binary on a minimal base that opgen writes itself,
// as an OCI image index of one image per platform (ko's approach, on
// github.com/google/go-containerregistry).
//
// # Flow
//
// Build compiles the main package once per platform (CGO_ENABLED=0,
// -trimpath, -buildvcs=false, -ldflags "-s -w -buildid="), reads the Go
// modules back from each binary's build information, and stacks two layers:
// the base (base.go: /etc/passwd and /etc/group with the non-root user
// 65532, the CA certificates of golang.org/x/crypto/x509roots/fallback,
// /etc/nsswitch.conf, /home/nonroot and /tmp) and the binary at /operator.
// WriteLayout, WriteArchive and Push write the index to an OCI layout
// directory, a tar file of one, or a registry.
//
// # Guarantees
//
//   - No base image is pulled and no daemon is needed.
//   - The same sources, Go toolchain, options and timestamp give the same
//     digest: the binary is built without paths, VCS stamp or build ID, and
//     every file and config carries the timestamp Options.Created
//     (SOURCE_DATE_EPOCH, or the Unix epoch).
//   - The image runs as 65532:65532 with the entrypoint /operator, as the
//     Dockerfile of `opgen dockerfile` does, so the manifests of `opgen
//     manifests` run either.
//   - The config's labels carry the org.opencontainers.image.* keys and,
//     under ModulesLabel, every Go module linked into the binary.
//
// # Caveats
//
// Roots of the CA bundle that the fallback bundle constrains (distrusted
// after a date) are left out: a PEM file cannot carry the constraint. No
// tzdata is written: the runtime needs none; build with -tags timetzdata
// (Options.Tags) for an operator that loads time zones.
package image
