package markers

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Prefix starts every opgen marker.
const Prefix = "+opgen:"

// Applier is implemented by every opgen controller marker; the webhook
// markers (IsWebhook) apply to a WebhookSpec instead.
type Applier interface {
	ApplyToController(*ControllerSpec) error
}

// helper is implemented by every marker type, in zz_generated.markerhelp.go.
type helper interface {
	Help() *markers.DefinitionHelp
}

// Definitions are opgen's markers, in the order the help lists them.
var Definitions = []*markers.Definition{
	markers.Must(markers.MakeDefinition("opgen:controller", markers.DescribesType, Controller{})),
	markers.Must(markers.MakeDefinition("opgen:controller:owns", markers.DescribesType, Owns(nil))),
	markers.Must(markers.MakeDefinition("opgen:controller:namesOwned", markers.DescribesType, NamesOwned{})),
	markers.Must(markers.MakeDefinition("opgen:controller:reads", markers.DescribesType, Reads(nil))),
	markers.Must(markers.MakeDefinition("opgen:controller:retain", markers.DescribesType, Retain(nil))),
	markers.Must(markers.MakeDefinition("opgen:controller:watches", markers.DescribesType, Watches{})),
	markers.Must(markers.MakeDefinition("opgen:controller:cacheSpec", markers.DescribesType, CacheSpec(nil))),
	markers.Must(markers.MakeDefinition("opgen:controller:reconcileEvery", markers.DescribesType, ReconcileEvery(""))),
	markers.Must(markers.MakeDefinition("opgen:controller:workers", markers.DescribesType, Workers(0))),
	markers.Must(markers.MakeDefinition("opgen:controller:dispatch", markers.DescribesType, Dispatch(""))),
	markers.Must(markers.MakeDefinition("opgen:controller:for", markers.DescribesType, For(""))),
	markers.Must(markers.MakeDefinition("opgen:controller:labelSelector", markers.DescribesType, LabelSelector(""))),
	markers.Must(markers.MakeDefinition(WebhookValidateMarker, markers.DescribesType, WebhookValidate{})),
	markers.Must(markers.MakeDefinition(WebhookDefaultMarker, markers.DescribesType, WebhookDefault{})),
}

// renamed are the former names of markers, each with the marker to
// write instead. A former name is accepted for a release, with a warning
// (Renamed) that names the fix.
var renamed = map[string]string{
	"opgen:controller:namesChildren": "opgen:controller:namesOwned",
}

// Renamed returns the warning for a marker written under a former name,
// or "" when name is not one.
func Renamed(name string) string {
	if now, ok := renamed[name]; ok {
		return fmt.Sprintf("+%s is deprecated: write +%s, which means the same", name, now)
	}
	return ""
}

// Register adds opgen's markers, with their help, to reg, and their
// former names (renamed).
func Register(reg *markers.Registry) error {
	for _, def := range Definitions {
		if err := reg.Register(def); err != nil {
			return err
		}
		reg.AddHelp(def, Help(def))
	}
	for _, def := range Definitions {
		for old, now := range renamed {
			if now != def.Name {
				continue
			}
			if err := reg.Register(markers.Must(markers.MakeDefinition(old, def.Target, reflect.Zero(def.Output).Interface()))); err != nil {
				return err
			}
		}
	}
	return nil
}

// Help returns the help of an opgen marker definition.
func Help(def *markers.Definition) *markers.DefinitionHelp {
	if h, ok := reflect.Zero(def.Output).Interface().(helper); ok {
		return h.Help()
	}
	return nil
}

// Known reports whether name (a marker without its + and arguments) is an
// opgen marker, under its name or a former one.
func Known(name string) bool {
	if _, ok := renamed[name]; ok || ReadByGenerator(name) {
		return true
	}
	for _, def := range Definitions {
		if def.Name == name {
			return true
		}
	}
	return false
}

// Name returns the name of the marker in a comment's text: what stands
// between the + and the first = or end.
func Name(text string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(text), "+"), "=")
	return strings.TrimSpace(name)
}

// Unknown returns the error for a +opgen: marker that does not exist, with
// the closest known marker as a suggestion.
func Unknown(name string) error {
	best, bestDist := "", 1<<30
	for _, def := range Definitions {
		if d := Distance(strings.ToLower(name), strings.ToLower(def.Name)); d < bestDist {
			best, bestDist = def.Name, d
		}
	}
	msg := fmt.Sprintf("unknown marker +%s", name)
	if bestDist <= len(best)/2 {
		msg += fmt.Sprintf(": did you mean +%s?", best)
	}
	return fmt.Errorf("%s (known opgen markers: %s; `opgen help markers` documents them)", msg, strings.Join(names(), ", "))
}

func names() []string {
	var out []string
	for _, def := range Definitions {
		out = append(out, "+"+def.Name)
	}
	sort.Strings(out)
	return out
}

// Distance is the Levenshtein distance between a and b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
