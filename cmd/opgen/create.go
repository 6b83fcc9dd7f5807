package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/cli"
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
--with-delete: its presence keeps a finalizer on every object of the kind),
with its test internal/controller/<kind>_test.go and, the first time, the
package's internal/controller/main_test.go, which starts the control plane
the tests share.
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
			return cli.CreateAPI(cmd.Context(), root, controllerDir, api, cmd.OutOrStdout())
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
	return inProjectDir(cmd, false)
}
