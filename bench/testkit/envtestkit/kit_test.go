// Package envtestkit is the controller-runtime side of the harness's
// testkit benchmark: 20 tests against envtest's control plane, started in
// TestMain as a kubebuilder project does (envtest.Environment Start and
// Stop, etcd and kube-apiserver from KUBEBUILDER_ASSETS).
package envtestkit

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/opgen-sdk/opgen/bench/testkit"
)

// cs is the tests' client; nil when the kit was not started.
var cs kubernetes.Interface

func TestMain(m *testing.M) {
	if !testkit.Enabled() {
		os.Exit(m.Run()) // every test skips and says why
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest did not start: %v (KUBEBUILDER_ASSETS must name the directory of etcd and kube-apiserver; the harness sets it)\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest did not stop:", err)
		}
	}()
	if cs, err = kubernetes.NewForConfig(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "a client of envtest's API server:", err)
		return 1
	}
	return m.Run()
}

func TestConfigMap01(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap02(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap03(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap04(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap05(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap06(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap07(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap08(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap09(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap10(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap11(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap12(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap13(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap14(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap15(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap16(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap17(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap18(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap19(t *testing.T) { testkit.Case(t, cs) }
func TestConfigMap20(t *testing.T) { testkit.Case(t, cs) }
