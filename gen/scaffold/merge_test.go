package scaffold

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMerge3(t *testing.T) {
	labels := Labels{Yours: "yours", Base: "base", Theirs: "theirs"}
	text := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	base := text("a", "b", "c", "d", "e")
	cases := []struct {
		name, yours, theirs, want string
		conflicts                 []int
	}{
		{"nothing changed", base, base, base, nil},
		{"yours only", text("a", "B", "c", "d", "e"), base, text("a", "B", "c", "d", "e"), nil},
		{"theirs only", base, text("a", "b", "c", "D", "e", "f"), text("a", "b", "c", "D", "e", "f"), nil},
		{"both, apart", text("a", "B", "c", "d", "e"), text("a", "b", "c", "D", "e"), text("a", "B", "c", "D", "e"), nil},
		{"both, alike", text("a", "B", "c", "d", "e"), text("a", "B", "c", "d", "e"), text("a", "B", "c", "d", "e"), nil},
		{"yours added, theirs removed elsewhere", text("z", "a", "b", "c", "d", "e"), text("a", "b", "d", "e"), text("z", "a", "b", "d", "e"), nil},
		{"conflict", text("a", "b", "C1", "d", "e"), text("a", "b", "C2", "d", "e"),
			text("a", "b", "<<<<<<< yours", "C1", "||||||| base", "c", "=======", "C2", ">>>>>>> theirs", "d", "e"), []int{3}},
		{"both appended", text("a", "b", "c", "d", "e", "y"), text("a", "b", "c", "d", "e", "t"),
			text("a", "b", "c", "d", "e", "<<<<<<< yours", "y", "||||||| base", "=======", "t", ">>>>>>> theirs"), []int{6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, conflicts := Merge3([]byte(base), []byte(c.yours), []byte(c.theirs), labels)
			assert.Equal(t, c.want, string(got))
			var at []int
			for _, k := range conflicts {
				at = append(at, k.Line)
			}
			assert.Equal(t, c.conflicts, at)
		})
	}
}

func TestMerge3NoFinalNewline(t *testing.T) {
	got, conflicts := Merge3([]byte("a\nb"), []byte("a\nb"), []byte("a\nb\nc"), Labels{})
	assert.Empty(t, conflicts)
	assert.Equal(t, "a\nb\nc\n", string(got))
}
