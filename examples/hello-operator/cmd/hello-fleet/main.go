// Command hello-fleet runs hello-operator in many clusters from one
// process: the same generated controller.Setup, one operator per member
// cluster (package fleet). The member clusters come from Secrets of the
// home cluster labelled opgen.dev/cluster, or from the kubeconfig files
// of --cluster-kubeconfig-dir. See docs/multicluster.md.
package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"

	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
)

func main() {
	fleet.Main(fleet.Options{Options: runtime.Options{Name: "hello-operator"}}, controller.Setup)
}
