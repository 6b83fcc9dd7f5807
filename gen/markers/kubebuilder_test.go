package markers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/gen/markers"
)

func TestCheckKubebuilder(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"+kubebuilder:validation:Minimum=1", ""},
		{"+kubebuilder:object:root=true", ""},
		{"+kubebuilder:subresource:status", ""},
		{"+kubebuilder:printcolumn:name=Title,type=string,JSONPath=.spec.title", ""},
		{"+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get", ""},
		{"+kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,groups=a,resources=b,verbs=create,versions=v1,name=x,sideEffects=None,admissionReviewVersions=v1", ""},
		{"+kubebuilder:scaffold:imports", ""},
		{"+kubebuilder:mytool:thing=1 // opgen:ignore-marker", ""},
		{"+kubebuilder:validation:Minimum, +kubebuilder:default and", ""},
		{"+kubebuilder:validation:Minimum =1", "marker +kubebuilder:validation:Minimum has a space before its '='"},
		{"+kubebuilder:validation:Minimun=1", "unknown marker +kubebuilder:validation:Minimun: controller-tools would ignore it in silence; did you mean +kubebuilder:validation:Minimum? (if another tool reads it, end the line with \"// opgen:ignore-marker\")"},
		{"+kubebuilder:subresource:stats", "did you mean +kubebuilder:subresource:status?"},
		{"+kubebuilder:printcolum:name=Title,type=string,JSONPath=.spec.title", "did you mean +kubebuilder:printcolumn?"},
		{"+kubebuilder:mytool:thing=1", "unknown marker +kubebuilder:mytool:thing: controller-tools would ignore it in silence (if another tool"},
		{"+kubebuilder:validation:Minimum=one", "bad argument in +kubebuilder:validation:Minimum:"},
		{"+kubebuilder:printcolumn:name=Title,typ=string,JSONPath=.spec.title", "did you mean type? (arguments: JSONPath, description, format, name, priority, type)"},
	} {
		t.Run(c.text, func(t *testing.T) {
			got := markers.CheckKubebuilder(c.text, nil)
			if c.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, c.want)
		})
	}
}
