package gen

import (
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParsePos(t *testing.T) {
	cases := map[string]token.Position{
		"/a/b.go:3:4":       {Filename: "/a/b.go", Line: 3, Column: 4},
		"/a/b.go:3":         {Filename: "/a/b.go", Line: 3},
		"c:\\a\\b.go:3:4":   {Filename: "c:\\a\\b.go", Line: 3, Column: 4},
		"example.com/pkg:-": {},
		"-":                 {},
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			assert.Equal(t, want, parsePos(in))
		})
	}
}
