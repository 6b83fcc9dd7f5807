package plug

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type inner struct {
	Ready bool `json:"ready,omitempty"`
}

type zeroStatus struct {
	Common   `json:",inline"`
	Overdue  bool              `json:"overdue,omitempty"`
	Count    int32             `json:"count,omitempty"`
	Phase    string            `json:"phase,omitempty"`
	Items    []string          `json:"items,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Limit    *int32            `json:"limit,omitempty"`
	Since    metav1.Time       `json:"since,omitempty"`
	Nested   inner             `json:"nested,omitempty"`
	Unknown  string            `json:"-"`
	untagged string
}

type Common struct {
	Generation int64 `json:"generation,omitempty"`
}

// A field another writer set and the handler leaves at its zero value is
// written with it: bool false, 0, "", an empty list or map, nested and
// inlined too; a nil pointer and a zero time mean unset and stay out. A
// cleared list goes by apply, the filled status whole, every digit of an
// int64 kept; with no list changed the filled fields go in a merge patch.
func TestZeroFilled(t *testing.T) {
	typ := reflect.TypeFor[zeroStatus]()
	limit := int32(3)
	cached := zeroStatus{Common: Common{Generation: 4}, Overdue: true, Count: 5, Phase: "x", Items: []string{"a"},
		Labels: map[string]string{"k": "v"}, Limit: &limit, Since: metav1.Now(), Nested: inner{Ready: true}, untagged: "not JSON"}
	desired := zeroStatus{Count: 1, Common: Common{Generation: 1<<53 + 1}}
	d, err := json.Marshal(desired)
	require.NoError(t, err)
	c, err := json.Marshal(cached)
	require.NoError(t, err)
	got, merge, err := statusWrite(d, c, typ)
	require.NoError(t, err)
	assert.False(t, merge, "a list changed: applied whole")
	assert.Contains(t, string(got), `"generation":9007199254740993`)
	var m map[string]any
	require.NoError(t, json.Unmarshal(got, &m))
	assert.Equal(t, map[string]any{
		"generation": float64(1<<53 + 1), "overdue": false, "count": float64(1), "phase": "", "items": []any{},
		"labels": map[string]any{}, "nested": map[string]any{"ready": false},
		"since": nil, // encoding/json writes a zero metav1.Time as null, omitempty or not
	}, m)

	same, merge, err := statusWrite(d, d, typ)
	require.NoError(t, err)
	assert.False(t, merge)
	assert.Equal(t, string(d), string(same), "nothing to fill when the cache agrees")

	c, err = json.Marshal(zeroStatus{Count: 5, Overdue: true, Phase: "x", Nested: inner{Ready: true}})
	require.NoError(t, err)
	got, merge, err = statusWrite(d, c, typ)
	require.NoError(t, err)
	assert.True(t, merge, "no list changed: merged")
	assert.JSONEq(t, `{"status":{"generation":9007199254740993,"count":1,"overdue":false,"phase":"","nested":{"ready":false}}}`, string(got))
}
