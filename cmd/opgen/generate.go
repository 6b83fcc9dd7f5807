package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/markers"
)

func newGenerateCommand() *cobra.Command {
	var flags cli.GenerateFlags
	cmd := &cobra.Command{
		Use:   "generate [packages]",
		Short: "Generate everything derivable from the annotated API types",
		Long:  generateHelp(),
		Example: `  //go:generate go tool opgen generate ./...
  opgen generate ./apis/... --name hello-operator`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := flags.Options()
			if err != nil {
				return err
			}
			return cli.Generate(cmd.Context(), opts, args, cmd.ErrOrStderr())
		},
	}
	flags.Register(cmd.Flags())
	return cmd
}

// generateHelp documents the command; opgen help markers (markersHelp)
// documents the markers, as controller-gen keeps them behind -hhh.
func generateHelp() string {
	return `Reads the API packages matched by the patterns (relative to the current
directory, the project root; default ./...) and writes, relative to the root:

  API packages       zz_generated.deepcopy.go, zz_generated.register.go,
                     zz_generated.accessors.go
  config/crd         one CustomResourceDefinition per kind
  config/rbac        role.yaml (ClusterRole), leader_election_role.yaml
  pkg/generated      clientset (with fake), listers, informers, apply configurations
  internal/controller  zz_generated.controllers.go, and once, a stub per controller

kubebuilder markers work unchanged; +genclient is not needed. opgen's own
markers (+opgen:controller, +opgen:webhook:validate, ...) are documented by
opgen help markers, the whole command by opgen help generate-manual.

Output is deterministic and gofmt'd. A run that finds errors reports all of
them and writes nothing. When neither the inputs nor the outputs changed
since the last run, nothing is done (--force overrides).

Compatibility gate: when config/released holds the CRDs of the last release
(opgen release records them; --baseline-ref takes them from a git tag
instead), a change that breaks their objects fails the run at the Go field,
unless a +opgen:compat:allow marker acknowledges it (opgen help upgrading).`
}

// markersHelp is the manual of every +opgen: marker, from the markers'
// godoc: opgen help markers.
func markersHelp() string {
	var b strings.Builder
	b.WriteString(`opgen's markers, read by opgen generate. kubebuilder's markers
(+kubebuilder:validation:..., +kubebuilder:rbac, ...) work unchanged, as
controller-gen documents them.

Controllers and webhooks, on a kind's type:
`)
	for _, def := range markers.Definitions {
		h := markers.Help(def)
		if h == nil {
			continue
		}
		writeMarkerHelp(&b, "+"+def.Name, h.Details)
	}
	b.WriteString("\nRead by a generator, on fields and types:\n")
	for _, m := range markers.GeneratorMarkerHelp {
		writeMarkerHelp(&b, m.Usage, m.Details)
	}
	return b.String()
}

func writeMarkerHelp(b *strings.Builder, usage, details string) {
	fmt.Fprintf(b, "\n  %s\n", usage)
	for _, line := range strings.Split(details, "\n") {
		if line == "" {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(b, "      %s\n", strings.ReplaceAll(line, "\t", "    "))
	}
}
