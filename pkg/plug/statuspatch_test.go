package plug

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatusMergePatch: the changed and added values are merged, a field
// left out is removed, objects are diffed key by key, numbers keep every
// digit; a changed list, a null or no change at all is left to the apply,
// which then gets the status as it was (the type has no fields to fill).
func TestStatusMergePatch(t *testing.T) {
	for _, c := range []struct {
		name, applied, cached, want string
	}{
		{"changed and added", `{"a":1,"b":"x","c":true}`, `{"a":2,"b":"x"}`, `{"status":{"a":1,"c":true}}`},
		{"removed", `{"a":1}`, `{"a":1,"gone":"x"}`, `{"status":{"gone":null}}`},
		{"nested", `{"o":{"a":1,"b":2},"p":{"x":1}}`, `{"o":{"a":1,"b":3},"p":{"x":1}}`, `{"status":{"o":{"b":2}}}`},
		{"nested removal", `{"o":{"a":1}}`, `{"o":{"a":1,"b":3}}`, `{"status":{"o":{"b":null}}}`},
		{"new object", `{"o":{"a":[1]}}`, `{}`, `{"status":{"o":{"a":[1]}}}`},
		{"int64", `{"n":9007199254740993}`, `{"n":1}`, `{"status":{"n":9007199254740993}}`},
		{"unchanged list", `{"l":[1,2],"a":2}`, `{"l":[1,2],"a":1}`, `{"status":{"a":2}}`},
		{"changed list", `{"l":[1,3],"a":2}`, `{"l":[1,2],"a":1}`, ""},
		{"new list", `{"l":[1]}`, `{}`, ""},
		{"null", `{"t":null}`, `{"t":"2026-01-01T00:00:00Z"}`, ""},
		{"object for a scalar", `{"o":{"a":1}}`, `{"o":1}`, ""},
		{"nothing changed", `{"a":1}`, `{"a":1}`, ""},
		{"not an object", `[1]`, `{}`, ""},
	} {
		got, ok, err := statusWrite([]byte(c.applied), []byte(c.cached), reflect.TypeFor[struct{}]())
		require.NoError(t, err, c.name)
		if c.want == "" {
			assert.False(t, ok, c.name)
			assert.Equal(t, c.applied, string(got), c.name)
			continue
		}
		if assert.True(t, ok, c.name) {
			assert.JSONEq(t, c.want, string(got), c.name)
			if c.name == "int64" { // JSONEq compares float64s
				assert.Contains(t, string(got), "9007199254740993")
			}
		}
	}
}
