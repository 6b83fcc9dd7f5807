package markers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/gen/markers"
)

func TestCheckKubebuilder(t *testing.T) {
	for _, c := range []struct {
		text, want string
		ignored    bool // controller-tools ignores the line: a warning unless strict
	}{
		{"+kubebuilder:validation:Minimum=1", "", false},
		{"+kubebuilder:object:root=true", "", false},
		{"+kubebuilder:subresource:status", "", false},
		{"+kubebuilder:printcolumn:name=Title,type=string,JSONPath=.spec.title", "", false},
		{"+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get", "", false},
		{"+kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,groups=a,resources=b,verbs=create,versions=v1,name=x,sideEffects=None,admissionReviewVersions=v1", "", false},
		{"+kubebuilder:scaffold:imports", "", false},
		{"+kubebuilder:mytool:thing=1 // opgen:ignore-marker", "", false},
		{"+kubebuilder:validation:Minimum, +kubebuilder:default and", "", false},
		{"+kubebuilder:validation:Minimum =1", "marker +kubebuilder:validation:Minimum has a space before its '='", true},
		{"+kubebuilder:validation:Minimun=1", "unknown marker +kubebuilder:validation:Minimun: controller-tools ignores it in silence; did you mean +kubebuilder:validation:Minimum? (if another tool reads it, end the line with \"// opgen:ignore-marker\")", true},
		{"+kubebuilder:subresource:stats", "did you mean +kubebuilder:subresource:status?", true},
		{"+kubebuilder:printcolum:name=Title,type=string,JSONPath=.spec.title", "did you mean +kubebuilder:printcolumn?", true},
		{"+kubebuilder:mytool:thing=1", "unknown marker +kubebuilder:mytool:thing: controller-tools ignores it in silence (if another tool", true},
		// Markers of controller-tools' own test data and of real operators.
		{"+kubebuilder:validation:nullable", "did you mean +nullable?", true},
		{"+kubebuilder:validation:optional", "did you mean +kubebuilder:validation:Optional?", true},
		{"+kubebuilder:validation:enum=a;b", "did you mean +kubebuilder:validation:Enum?", true},
		{"+kubebuilder:validation:OneOf=Allow;Forbid", "unknown marker +kubebuilder:validation:OneOf: controller-tools ignores it in silence (if another tool", true},
		{"+kubebuilder:validation:Minimum=one", "bad argument in +kubebuilder:validation:Minimum:", false},
		{"+kubebuilder:printcolumn:name=Title,typ=string,JSONPath=.spec.title", "did you mean type? (arguments: JSONPath, description, format, name, priority, type)", false},
	} {
		t.Run(c.text, func(t *testing.T) {
			got := markers.CheckKubebuilder(c.text, nil)
			if c.want == "" {
				assert.Empty(t, got.Msg)
				return
			}
			assert.Contains(t, got.Msg, c.want)
			assert.Equal(t, c.ignored, got.Ignored, "whether controller-tools ignores the line")
		})
	}
}

// TestSuggestionIsDeterministic: the suggestion for a line is the same on
// every run. It was not: the closest marker was looked for in
// controller-tools' registry, a map, and ties at the same distance went to
// whichever came first (Type once, Enum the next, for the same line).
func TestSuggestionIsDeterministic(t *testing.T) {
	for _, text := range []string{"+kubebuilder:validation:nullable", "+kubebuilder:validation:Tipe", "+kubebuilder:validation:Minimun=1", "+kubebuilder:validation:Enun=a"} {
		first := markers.CheckKubebuilder(text, nil).Msg
		for range 50 {
			assert.Equal(t, first, markers.CheckKubebuilder(text, nil).Msg, text)
		}
	}
	// Two names at the same distance: the first in order wins, whatever
	// the order they come in.
	assert.Equal(t, "a:bcx", markers.Suggest("a:bcd", []string{"a:bcx", "a:bcy"}))
	assert.Equal(t, "a:bcx", markers.Suggest("a:bcd", []string{"a:bcy", "a:bcx"}))
}
