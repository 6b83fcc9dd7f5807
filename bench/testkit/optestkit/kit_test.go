// Package optestkit is opgen's side of the harness's testkit benchmark:
// 20 tests against optest's control plane, started in TestMain as an
// operator's test package does (optest.New(...).Main). With no operator
// to install (Options.Name empty) the kit is the shared control plane of
// pkg/testenv and an admin clientset.
package optestkit

import (
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/opgen-sdk/opgen/bench/testkit"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

var kit = optest.New(optest.Options{})

// cs is the tests' client; nil when the kit was not started.
var cs kubernetes.Interface

func TestMain(m *testing.M) {
	if !testkit.Enabled() {
		os.Exit(m.Run()) // every test skips and says why
	}
	kit.OnStart(func() { cs = kit.Clientset })
	kit.Main(m)
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
