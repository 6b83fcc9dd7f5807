package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen/cli"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print opgen's version and the Kubernetes and controller-tools versions it pins",
		Long: `Prints the version of the opgen module this binary was built from ((devel)
for a build from a checkout), the Go version and the versions of the
Kubernetes API, apimachinery, controller-tools and code-generator it was
built with: the Kubernetes API the generated code speaks and the
generators it uses. opgen init records the opgen version in the scaffold
(go.mod and a comment in generate.go).`,
		Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			cli.Version(cmd.OutOrStdout())
		},
	}
}
