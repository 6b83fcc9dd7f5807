package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/gen/markers"
)

func newGenerateCommand() *cobra.Command {
	var (
		opts    cli.GenerateOptions
		descLen int
		strict  bool
	)
	cmd := &cobra.Command{
		Use:   "generate [packages]",
		Short: "Generate everything derivable from the annotated API types",
		Long:  generateHelp(),
		Example: `  //go:generate go tool opgen generate ./...
  opgen generate ./apis/... --name hello-operator`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strict {
				opts.StrictMarkers, opts.StrictConversion = true, true
			}
			if !cmd.Flags().Changed("crd-dir") {
				opts.CRDDir = "" // the layout's default
			}
			if cmd.Flags().Changed("crd-max-desc-len") {
				opts.CRDMaxDescLen = &descLen
			}
			return cli.Generate(cmd.Context(), opts, args, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Dir, "dir", "C", ".", "project root: patterns and outputs are relative to it")
	f.StringVar(&opts.Name, "name", "", "name of the operator, for its roles, field manager and finalizers (default: the last element of the project's import path, from go.mod)")
	f.StringVar(&opts.ClientDir, "client-dir", gen.DefaultClientDir, "directory of the clientset, listers, informers and apply configurations")
	f.StringVar(&opts.ControllerDir, "controller-dir", gen.DefaultControllerDir, "package of the controller glue and stubs")
	f.StringVar(&opts.CRDDir, "crd-dir", gen.DefaultCRDDir, "directory of the CRD manifests (default "+cli.KubebuilderCRDDir+" with --layout kubebuilder)")
	f.StringVar(&opts.Layout, "layout", "opgen", "the project's layout: opgen, or kubebuilder for a project adopted from kubebuilder (opgen adopt): CRDs in "+cli.KubebuilderCRDDir+", the ClusterRole manager-role as controller-gen writes it, the webhook configurations of +kubebuilder:webhook markers")
	f.StringVar(&opts.RBACDir, "rbac-dir", gen.DefaultRBACDir, "directory of the RBAC manifests")
	f.StringVar(&opts.ReleasedDir, "released-dir", gen.DefaultReleasedDir, "directory of the CRDs of the last release (written by opgen release), which the compatibility gate compares the generated CRDs with")
	f.StringVar(&opts.BaselineRef, "baseline-ref", "", "compare the generated CRDs with those of --crd-dir at this git commit, tag or branch instead of --released-dir's")
	f.BoolVar(&opts.Force, "force", false, "generate even when nothing changed since the last run")
	f.BoolVar(&opts.AllowDangerousTypes, "allow-dangerous-types", false, "allow float32 and float64 fields in API types (clients in other languages may round them differently)")
	f.BoolVar(&opts.StrictMarkers, "strict-markers", false, "fail on a +kubebuilder: marker that controller-tools does not know (it ignores it, and opgen warns by default)")
	f.BoolVar(&strict, "strict", false, "refuse what controller-gen accepts but a new project should not have: --strict-markers, and a kind whose versions differ converted by opgen (stubbing what it cannot convert) rather than left without a conversion; projects opgen init creates pass it")
	f.IntVar(&descLen, "crd-max-desc-len", 0, "cap every description in the CRD schemas at this many characters, cut at a sentence end, as controller-gen's crd:maxDescLen (0 drops them); default: no cap")
	f.StringSliceVar(&opts.Only, "only", nil, "run only these generators: "+strings.Join(generators.Names(), ", "))
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "list every file written and the time taken")
	f.BoolVar(&opts.Timings, "timings", false, "print the time and allocation of the load, the type-check and each generator (run one after another), and the peak RSS")
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
