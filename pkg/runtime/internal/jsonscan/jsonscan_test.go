package jsonscan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStringEnd(t *testing.T) {
	for _, tc := range []struct {
		in      string // the content after the opening quote
		end     int
		escaped bool
	}{
		{`"`, 1, false},
		{`abc"rest`, 4, false},
		{`a\"b"`, 5, false},
		{`a\\"b"`, 4, false},
		{`a\\\"b"`, 7, false},
		{`\\\\"`, 5, false},
		{`abc`, -1, false},
		{`abc\`, -1, true},
		{`abc\\`, -1, false},
		{`abc\\\`, -1, true},
		{`a\"`, -1, false},
		{``, -1, false},
	} {
		end, escaped := StringEnd([]byte(tc.in), 0)
		assert.Equal(t, tc.end, end, "%s", tc.in)
		assert.Equal(t, tc.escaped, escaped, "%s", tc.in)
	}
}

// A string cut anywhere ends where the whole one does, the scan resuming
// past the cut as a stream reader does: past the escaped byte when the
// first part ended in an escape.
func TestStringEndAcrossReads(t *testing.T) {
	for _, s := range []string{`plain"`, `a\"b\\c\\\"d"`, `\\\\\\"`, `x\u00e9\n\t"`} {
		whole, _ := StringEnd([]byte(s), 0)
		for cut := 0; cut <= len(s); cut++ {
			b := []byte(s[:cut])
			end, escaped := StringEnd(b, 0)
			if end >= 0 {
				assert.Equal(t, whole, end, "%s cut at %d", s, cut)
				continue
			}
			b = []byte(s)
			i := cut
			if escaped {
				i++
			}
			end, _ = StringEnd(b, i)
			assert.Equal(t, whole, end, "%s cut at %d", s, cut)
		}
	}
}
