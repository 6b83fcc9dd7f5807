package markers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/gen/markers"
)

func TestOwnedNameRule(t *testing.T) {
	t.Parallel()
	gvk := func(ref string) schema.GroupVersionKind {
		g, err := markers.ParseKindRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		name  string
		owns  []string
		ok    bool
		cel   string
		kinds []string
	}{
		{"a Service is a DNS-1035 label", []string{"apps/v1.Deployment", "v1.Service"}, true,
			`size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`, []string{"v1.Service"}},
		{"a Namespace a DNS-1123 label", []string{"v1.Namespace"}, true,
			`size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`, []string{"v1.Namespace"}},
		{"the strictest format and the shortest length", []string{"batch/v1.CronJob", "v1.Namespace", "v1.Service"}, true,
			`size(self.metadata.name) <= 52 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`, []string{"batch/v1.CronJob", "v1.Namespace", "v1.Service"}},
		{"a Job only a length", []string{"batch/v1.Job"}, true, `size(self.metadata.name) <= 63`, []string{"batch/v1.Job"}},
		{"subdomains ask nothing more", []string{"apps/v1.Deployment", "v1.ConfigMap"}, false, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var owned []schema.GroupVersionKind
			for _, ref := range tc.owns {
				owned = append(owned, gvk(ref))
			}
			rule, ok := markers.OwnedNameRule(owned)
			assert.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tc.cel, rule.CEL())
			assert.Equal(t, tc.kinds, rule.Kinds)
		})
	}
	rule, _ := markers.OwnedNameRule([]schema.GroupVersionKind{gvk("v1.Service")})
	assert.Equal(t, "Greeting names its v1.Service after itself (+opgen:controller:namesOwned), so its name must be a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", rule.Message("Greeting"))
}
