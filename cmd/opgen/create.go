package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/scaffold"
)

func newCreateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Scaffold new parts of an operator project",
	}
	cmd.AddCommand(newCreateAPICommand())
	return cmd
}

func newCreateAPICommand() *cobra.Command {
	var (
		api           scaffold.APIOptions
		controllerDir string
	)
	cmd := &cobra.Command{
		Use:   "api --group G --version V --kind K",
		Short: "Scaffold the types of a new kind, or a new version of a kind, and its controller stub",
		Long: `Writes apis/<group>/<version>/<kind>_types.go (and doc.go with +groupName when
the version is new) and, for a new kind, the controller stub
internal/controller/<kind>.go with a Reconcile method (and Delete with
--with-delete: its presence keeps a finalizer on every object of the kind).
For a new version of an existing kind, only the
types are written: the controller stays on the existing version. With
--controller, the new version gets a controller of its own,
internal/controller/<kind>_<version>.go with <Kind><Version>Controller, and
the kind's objects are shared between the versions' controllers: the
existing versions' types that have +opgen:controller get
+opgen:controller:dispatch=written (each object goes to the controller of
the version it was last written in), the only change made to an existing
file; nothing is ever overwritten. Run go generate ./... afterwards.`,
		Example: `  opgen create api --group hello.example.com --version v1 --kind Greeting
  opgen create api --group hello.example.com --version v2 --kind Greeting
  opgen create api --group hello.example.com --version v2 --kind Greeting --controller`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := os.Getwd()
			if err != nil {
				return err
			}
			p, err := gen.NewProject(gen.Options{Root: root, ControllerDir: controllerDir, Patterns: []string{"."}})
			if err != nil {
				return err
			}
			created, err := scaffold.CreateAPI(p, api)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, f := range created.Files {
				rel, _ := filepath.Rel(root, f)
				fmt.Fprintf(out, "created %s\n", rel)
			}
			for _, n := range created.Notes {
				fmt.Fprintf(out, "note: %s\n", n)
			}
			return requireImports(cmd, p.ModuleDir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&api.Group, "group", "", "full API group, such as hello.example.com")
	f.StringVar(&api.Version, "version", "", "API version, such as v1 or v1beta1")
	f.StringVar(&api.Kind, "kind", "", "kind, such as Greeting")
	f.BoolVar(&api.ClusterScoped, "cluster-scoped", false, "make the kind cluster-scoped")
	f.BoolVar(&api.WithDelete, "with-delete", false, "give the controller stub a Delete method, run behind a finalizer when an object is deleted")
	f.BoolVar(&api.Controller, "controller", false, "for a new version of an existing kind: give it a controller too, sharing the objects with the other versions' controllers (+opgen:controller:dispatch)")
	f.StringVar(&api.APIDir, "api-dir", gen.DefaultAPIDir, "directory of the API groups")
	f.StringVar(&controllerDir, "controller-dir", gen.DefaultControllerDir, "package of the controller stubs")
	for _, name := range []string{"group", "version", "kind"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// requireImports adds to go.mod the modules the new files import through
// opgen (the scaffolded test's pkg/optest needs more than main.go's
// pkg/runtime does), so that go generate and go test run at once. The
// generated packages the files import do not exist before go generate:
// -e lets tidy add the rest all the same.
func requireImports(cmd *cobra.Command, moduleDir string) error {
	tidy := exec.CommandContext(cmd.Context(), "go", "mod", "tidy", "-e")
	tidy.Dir = moduleDir
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy -e in %s: %w\n%s", moduleDir, err, out)
	}
	return nil
}
