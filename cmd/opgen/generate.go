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

// generateHelp documents the command and every +opgen: marker, from the
// markers' godoc.
func generateHelp() string {
	var b strings.Builder
	b.WriteString(`Reads the API packages matched by the patterns (relative to the current
directory, the project root; default ./...) and writes, relative to the root:

  API packages       zz_generated.deepcopy.go, zz_generated.register.go,
                     zz_generated.accessors.go
  config/crd         one CustomResourceDefinition per kind
  config/rbac        role.yaml (ClusterRole), leader_election_role.yaml
  pkg/generated      clientset (with fake), listers, informers, apply configurations
  internal/controller  zz_generated.controllers.go, and once, a stub per controller

kubebuilder markers work unchanged; +genclient is not needed. Output is
deterministic and gofmt'd. A run that finds errors reports all of them and
writes nothing. When neither the inputs nor the outputs changed since the last
run, nothing is done (--force overrides). A run keeps its peak memory near
400 MiB while what it keeps alive fits (a soft limit that rises with a larger
live heap); GOMEMLIMIT or GOGC in the environment turns that off.

Compatibility gate: when config/released holds the CRDs of the last release
(opgen release records them; --baseline-ref takes them from a git tag
instead), a change that breaks their objects fails the run at the Go field:
a removed field or version, a changed type, scope or default, a new required
field, enum, CEL rule or pattern, a tighter bound. A marker above the field
acknowledges one on purpose (opgen help upgrading):

  // +opgen:compat:allow=<rule> reason="<why>"

Markers:
`)
	for _, def := range markers.Definitions {
		h := markers.Help(def)
		if h == nil {
			continue
		}
		fmt.Fprintf(&b, "\n  +%s\n", def.Name)
		for _, line := range strings.Split(h.Details, "\n") {
			if line == "" {
				b.WriteString("\n")
				continue
			}
			fmt.Fprintf(&b, "      %s\n", strings.ReplaceAll(line, "\t", "    "))
		}
	}
	return b.String()
}
