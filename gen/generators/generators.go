// Package generators is the one list of opgen generate's generators, by
// name: the command runs them, and the tests that keep the examples and
// golden projects fresh run the same list, so a generator added here is
// tested as soon as it exists. It lives beside package gen, not in it,
// because every generator imports gen.
package generators

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/accessors"
	"github.com/opgen-sdk/opgen/gen/apidocs"
	"github.com/opgen-sdk/opgen/gen/client"
	"github.com/opgen-sdk/opgen/gen/compat"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/conversion"
	"github.com/opgen-sdk/opgen/gen/crd"
	"github.com/opgen-sdk/opgen/gen/deepcopy"
	"github.com/opgen-sdk/opgen/gen/defaults"
	"github.com/opgen-sdk/opgen/gen/rbac"
	"github.com/opgen-sdk/opgen/gen/register"
	"github.com/opgen-sdk/opgen/gen/samples"
	"github.com/opgen-sdk/opgen/gen/scaffold"
	"github.com/opgen-sdk/opgen/gen/webhooks"
)

// All returns every generator of opgen generate, by name. The values are
// new on every call: a generator may keep state for one run (the client
// generator keeps its load).
func All() map[string]gen.Generator {
	return map[string]gen.Generator{
		"deepcopy":  deepcopy.Generator{},
		"register":  register.Generator{},
		"accessors": accessors.Generator{},
		"crd":       crd.Generator{},
		// The API compatibility gate: writes nothing, fails the run on a
		// change that breaks objects of the last release (gen/compat).
		"compat": &compat.Generator{},
		// Typed conversions between a kind's versions (zz_generated.conversion.go).
		"conversion": &conversion.Generator{},
		// Defaulters of the packages tagged +k8s:defaulter-gen (zz_generated.defaults.go).
		"defaults":   &defaults.Generator{},
		"client":     &client.Generator{},
		"controller": controller.Generator{},
		// Controller stubs and main.go, written once.
		"scaffold": scaffold.Generator{},
		"rbac":     rbac.Generator{},
		// Admission webhook configurations (config/webhook/manifests.yaml).
		"webhooks": webhooks.Generator{},
		// API reference docs (docs/api/<group>.md).
		"apidocs": apidocs.Generator{},
		// Sample objects, written once (config/samples).
		"samples": samples.Generator{},
	}
}

// Names returns the names of All, sorted.
func Names() []string { return names(All()) }

func names(set map[string]gen.Generator) []string {
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Pick returns the generators of All named in only, or all of them when
// only is empty; an unknown name is an error that lists the valid ones.
func Pick(only []string) (map[string]gen.Generator, error) { return pick(All(), only) }

// Layouts are the project layouts opgen generate writes, by name: opgen's
// own (All) and that of a project adopted from kubebuilder (Kubebuilder).
var Layouts = map[string]func() map[string]gen.Generator{
	"opgen":       All,
	"kubebuilder": Kubebuilder,
}

// PickLayout is Pick on the generators of a layout of Layouts.
func PickLayout(layout string, only []string) (map[string]gen.Generator, error) {
	set, ok := Layouts[layout]
	if !ok {
		return nil, fmt.Errorf("--layout %s: no such layout; pick opgen or kubebuilder", layout)
	}
	return pick(set(), only)
}

// formerNames are former names of generators, which --only still takes.
var formerNames = map[string]string{"stubs": "scaffold"}

func pick(all map[string]gen.Generator, only []string) (map[string]gen.Generator, error) {
	if len(only) == 0 {
		return all, nil
	}
	out := map[string]gen.Generator{}
	for _, name := range only {
		if now, ok := formerNames[name]; ok {
			name = now
		}
		g, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("--only %s: no such generator; pick from %s", name, strings.Join(names(all), ", "))
		}
		out[name] = g
	}
	return out, nil
}
