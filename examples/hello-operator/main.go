package main

import (
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"

	"github.com/opgen-sdk/opgen/pkg/runtime"

	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
)

func main() {
	// --version answers before Main looks for a cluster.
	flag.BoolFunc("version", "print what the binary was built from and exit", printVersion)
	// Main binds the runtime's flags (run with -h to list them), loads the
	// kubeconfig or the in-cluster config, registers every controller of
	// the generated controller.Setup and runs until SIGTERM or Ctrl-C.
	runtime.Main(runtime.Options{Name: "hello-operator"}, controller.Setup)
}

// printVersion prints the main module's path and version, the Go version
// and the platform, then exits. `go version -m` on the binary lists every
// module.
func printVersion(string) error {
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Printf("%s %s %s %s/%s\n", bi.Path, bi.Main.Version, bi.GoVersion, goruntime.GOOS, goruntime.GOARCH)
	}
	os.Exit(0)
	return nil
}
