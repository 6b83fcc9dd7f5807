package runtime

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A member name is a label value and part of a Lease name, whatever the
// identity, and two identities never share one.
func TestMemberName(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{
		"todo-operator-7d9f8b6c5-x2k4q", "host_12ab34", "Host_12AB34", "", "__", strings.Repeat("a", 300),
		strings.Repeat("a", 300) + "b", "pod.with.dots", "-leading-and-trailing-",
	} {
		m := memberName(id)
		assert.Empty(t, validation.IsValidLabelValue(m), "%q → %q", id, m)
		assert.Empty(t, validation.IsDNS1123Subdomain("op-member-"+m), "%q → %q", id, m)
		if other, ok := seen[m]; ok {
			t.Errorf("%q and %q share the member name %q", id, other, m)
		}
		seen[m] = id
	}
	assert.True(t, strings.HasPrefix(memberName("todo-operator-7d9f8b6c5-x2k4q"), "todo-operator-7d9f8b6c5-x2k4q-"), "a Pod name stays readable")
}

func TestShardLabels(t *testing.T) {
	k := newShardKeys(Options{Name: "Todo_Operator", LeaderElection: LeaderElectionOptions{LeaseName: "todo", Identity: "pod-a"}})
	assert.Equal(t, "shard.opgen.dev/todo-operator", k.label)
	assert.Equal(t, "drain.shard.opgen.dev/todo-operator", k.drain)
	assert.Empty(t, validation.IsQualifiedName(k.label))
	assert.Empty(t, validation.IsQualifiedName(k.drain))
	assert.Equal(t, "todo-member-", k.leasePrefix)
}
