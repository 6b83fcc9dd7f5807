package markers_test

import (
	"strings"
	"testing"

	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen/markers"
)

// FuzzMarkerLine feeds arbitrary comment lines through everything opgen
// does with a marker line before any file is written: the lookup and
// parse of controller-tools' registry with opgen's markers, applying the
// marker to a controller spec, the +kubebuilder: check, the owns-list
// check and the suggestion for an unknown name. None may panic; every
// failure must say something; and a kind reference that parses must
// print back to itself. It is the cheap target of the generator's fuzzing
// (thousands of lines a second; FuzzGenerate in package gen runs whole
// generations at a few a second):
//
//	go test ./gen/markers -run '^$' -fuzz FuzzMarkerLine -fuzztime 5m
func FuzzMarkerLine(f *testing.F) {
	for _, def := range markers.Definitions {
		f.Add("+" + def.Name)
		f.Add("+" + def.Name + "=")
	}
	for _, s := range []string{
		"+opgen:controller:owns=apps/v1.Deployment;v1.Service",
		"+opgen:controller:owns=apps/v1.Deployment,v1.Service",
		"+opgen:controller:reconcileEvery=1h30m",
		"+opgen:controller:workers=4",
		"+opgen:controller:workers=-1",
		"+opgen:controller:watches={kind:v1.ConfigMap,mapper:configMapToTodos}",
		"+opgen:controller:dispatch=v2",
		"+opgen:controller:labelSelector=app in (a,b)",
		"+kubebuilder:validation:Minimum=1",
		"+kubebuilder:printcolumn:name=Greeting,type=string,JSONPath=.spec.greeting",
		"+kubebuilder:validation:Enum=a;b",
		"+kubebuilder:object:root = true",
		`+kubebuilder:default={"a":1}`,
		"+opgen:controler",
	} {
		f.Add(s)
	}
	reg := &ctmarkers.Registry{}
	if err := markers.Register(reg); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		// The generator sees only marker comments: // followed by +.
		line = "+" + strings.TrimPrefix(line, "+")
		for _, target := range []ctmarkers.TargetType{ctmarkers.DescribesType, ctmarkers.DescribesField, ctmarkers.DescribesPackage} {
			def := reg.Lookup(line, target)
			if def == nil {
				continue
			}
			v, err := def.Parse(line)
			if err != nil {
				if err.Error() == "" {
					t.Errorf("%q: a parse error with no message", line)
				}
				continue
			}
			if a, ok := v.(markers.Applier); ok {
				if err := a.ApplyToController(&markers.ControllerSpec{}); err != nil && err.Error() == "" {
					t.Errorf("%q: an apply error with no message", line)
				}
			}
		}
		_ = markers.CheckKubebuilder(line, reg)
		_ = markers.CheckOwnsList(line)
		if name := markers.Name(line); strings.HasPrefix(line, markers.Prefix) && !markers.Known(name) {
			if err := markers.Unknown(name); err == nil || err.Error() == "" {
				t.Errorf("%q: an unknown marker without a message", line)
			}
		}
		_, ref, _ := strings.Cut(line, "=")
		if gvk, err := markers.ParseKindRef(ref); err == nil {
			back, err := markers.ParseKindRef(markers.FormatKindRef(gvk))
			if err != nil || back != gvk {
				t.Errorf("%q parses to %v, which prints as %q and parses back to %v (%v)", ref, gvk, markers.FormatKindRef(gvk), back, err)
			}
		} else if err.Error() == "" {
			t.Errorf("%q: a kind reference error with no message", ref)
		}
	})
}
