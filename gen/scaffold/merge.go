package scaffold

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Labels name the three sides of a merge in its conflict markers.
type Labels struct {
	Yours, Base, Theirs string
}

// Conflict is a part of a merged file where the user's file and the new
// template both changed the base, each another way.
type Conflict struct {
	// Line is the 1-based line of its <<<<<<< marker in the merged file.
	Line int
}

// Merge3 merges, line by line, the changes from base to yours and from
// base to theirs, as diff3 and git merge-file do: a part only one side
// changed takes that side's lines, a part both changed alike takes
// them once, and a part both changed differently is a conflict, written
// between git's markers with the base in the middle (merge.conflictStyle
// diff3), so that a reader sees what the template was.
//
// It is written here because no diff3 library is served to this module;
// the line matching is go-difflib's (Python difflib's), without the
// heuristic that treats frequent lines as junk.
func Merge3(base, yours, theirs []byte, labels Labels) ([]byte, []Conflict) {
	o, a, b := lines(base), lines(yours), lines(theirs)
	var out []string
	var conflicts []Conflict
	for _, c := range chunks(o, a, b) {
		switch {
		case c.stable || equal(c.a, c.o) && equal(c.b, c.o):
			out = append(out, c.o...)
		case equal(c.a, c.o) || equal(c.a, c.b):
			out = append(out, c.b...)
		case equal(c.b, c.o):
			out = append(out, c.a...)
		default:
			conflicts = append(conflicts, Conflict{Line: len(out) + 1})
			out = append(out, "<<<<<<< "+labels.Yours+"\n")
			out = append(out, c.a...)
			out = append(out, "||||||| "+labels.Base+"\n")
			out = append(out, c.o...)
			out = append(out, "=======\n")
			out = append(out, c.b...)
			out = append(out, ">>>>>>> "+labels.Theirs+"\n")
		}
	}
	return []byte(strings.Join(out, "")), conflicts
}

// lines splits s into lines that keep their "\n"; a last line without
// one gets it, so that a marker after it starts a line.
func lines(s []byte) []string {
	out := strings.SplitAfter(string(s), "\n")
	if out[len(out)-1] == "" {
		return out[:len(out)-1]
	}
	out[len(out)-1] += "\n"
	return out
}

func equal(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// chunk is a part of the three files: stable where all three agree.
type chunk struct {
	stable  bool
	o, a, b []string
}

// chunks cuts the files into stable parts, where each line of base is
// matched in both others at the same offsets, and the parts between.
func chunks(o, a, b []string) []chunk {
	ma, mb := matchOf(o, a), matchOf(o, b)
	var out []chunk
	i, j, k := 0, 0, 0
	for {
		n := 0
		for i+n < len(o) && ma[i+n] == j+n && mb[i+n] == k+n {
			n++
		}
		if n > 0 {
			out = append(out, chunk{stable: true, o: o[i : i+n]})
			i, j, k = i+n, j+n, k+n
			continue
		}
		// The next line of base that both others keep, after j and k.
		next := i
		for next < len(o) && (ma[next] < j || mb[next] < k) {
			next++
		}
		endA, endB := len(a), len(b)
		if next < len(o) {
			endA, endB = ma[next], mb[next]
		}
		if i == next && j == endA && k == endB {
			return out
		}
		out = append(out, chunk{o: o[i:next], a: a[j:endA], b: b[k:endB]})
		i, j, k = next, endA, endB
	}
}

// matchOf maps each line of base to the line of other it matches, or -1.
func matchOf(base, other []string) []int {
	out := make([]int, len(base))
	for i := range out {
		out[i] = -1
	}
	m := difflib.NewMatcherWithJunk(base, other, false, nil)
	for _, block := range m.GetMatchingBlocks() {
		for n := 0; n < block.Size; n++ {
			out[block.A+n] = block.B + n
		}
	}
	return out
}
