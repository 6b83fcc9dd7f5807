package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// pinnedModules are the dependencies whose versions decide what opgen
// generates and which Kubernetes it speaks to; opgen version reports them.
var pinnedModules = []struct{ label, path string }{
	{"kubernetes (client-go)", "k8s.io/client-go"},
	{"apimachinery", "k8s.io/apimachinery"},
	{"controller-tools", "sigs.k8s.io/controller-tools"},
}

// versionInfo is what opgen version prints: opgen's module version and the
// versions of the pinned modules, from the binary's build information.
type versionInfo struct {
	Opgen  string
	Go     string
	Pinned [][2]string // label, version
}

func readVersionInfo() versionInfo {
	v := versionInfo{Opgen: "unknown", Go: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Opgen, v.Go = bi.Main.Version, bi.GoVersion
	if v.Opgen == "" {
		v.Opgen = "(devel)"
	}
	deps := map[string]string{}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		deps[d.Path] = d.Version
	}
	for _, m := range pinnedModules {
		ver := deps[m.path]
		if ver == "" {
			ver = "unknown (not in the build information)"
		}
		v.Pinned = append(v.Pinned, [2]string{m.label, ver})
	}
	return v
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print opgen's version and the Kubernetes and controller-tools versions it pins",
		Long: `Prints the version of the opgen module this binary was built from ((devel)
for a build from a checkout), the Go version and the versions of the
Kubernetes client libraries and controller-tools it was built with: the
Kubernetes API the generated code speaks and the CRD generator it uses.
opgen init records the opgen version in the scaffold (go.mod and a comment
in generate.go).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersionInfo()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%-24s %s\n", "opgen", v.Opgen)
			fmt.Fprintf(out, "%-24s %s\n", "go", v.Go)
			for _, p := range v.Pinned {
				fmt.Fprintf(out, "%-24s %s\n", p[0], p[1])
			}
			return nil
		},
	}
}
