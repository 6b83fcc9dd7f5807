package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/image"
)

func newImageCommand() *cobra.Command {
	var opts cli.ImageOptions
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build the operator's container image without Docker: linux/amd64 and linux/arm64, reproducible, non-root",
		Long: `Builds the operator's main package statically (CGO_ENABLED=0, -trimpath,
-buildvcs=false, -ldflags "-s -w -buildid=") for each platform and puts each
binary at /operator on a minimal base that opgen writes (the non-root user
65532 in /etc/passwd and /etc/group, the CA certificates of Go's
golang.org/x/crypto/x509roots/fallback bundle, /tmp): no base image is
pulled and no container engine runs. The images form one OCI image index.
Its config carries org.opencontainers.image.* labels and the Go modules
linked into the binary (label ` + image.ModulesLabel + `).

Every timestamp is $` + image.EnvSourceDateEpoch + ` (default: the Unix epoch), so the
same sources, Go and opgen give the same digest.

--out writes an OCI layout directory (default ` + cli.DefaultImageOut + `), or one tar file
of it when the name ends in .tar. --push pushes the index to a registry
with the credentials docker login and credential helpers keep
(~/.docker/config.json). The image's reference by digest goes to standard
output: pass it to opgen manifests --image, so that what was built is what
is deployed. See opgen help deploying.`,
		Example: `  opgen image
  IMG=$(opgen image --push registry.example.com/widget-operator:v0.1.0)
  opgen manifests --image "$IMG" --out deploy/widget-operator.yaml
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) opgen image --out bin/image.tar --label org.opencontainers.image.revision=$(git rev-parse HEAD)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Image(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", "", "operator name, the image's title (default: from the module path in go.mod, as opgen generate names its roles)")
	f.StringVar(&opts.Main, "main", ".", "main package to build, as go build takes it")
	f.StringSliceVar(&opts.Platforms, "platform", image.DefaultPlatforms, "platforms, os/arch[/variant]")
	f.StringSliceVar(&opts.Tags, "tags", nil, "Go build tags (timetzdata embeds the time zones)")
	f.StringArrayVar(&opts.LabelFlags, "label", nil, "a label of the image config, key=value (repeat it)")
	f.StringVarP(&opts.Out, "out", "o", "", "OCI layout directory, or a .tar file of one (default "+cli.DefaultImageOut+" unless --push)")
	f.StringVar(&opts.Push, "push", "", "push the image index to this tag, such as registry.example.com/widget-operator:v0.1.0")
	return inProjectDir(cmd, false)
}
