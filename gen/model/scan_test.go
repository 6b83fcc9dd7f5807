package model

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommentOwnersFollowControllerTools(t *testing.T) {
	src := `// +groupName=x.example.com
package v1

import "fmt"

// +opgen:controller
// A is documented.
type A struct {
	// +opgen:inside
	F int
}

// +opgen:detached

// B has a detached marker group above its doc.
type B struct{}

type (
	// C is in a group.
	C struct{}
)

var _ = fmt.Sprint
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	require.NoError(t, err)
	owners := commentOwners(f)
	got := map[string]string{}
	for _, g := range f.Comments {
		name := ""
		if ts := owners[g]; ts != nil {
			name = ts.Name.Name
		}
		got[g.List[0].Text] = name
	}
	assert.Equal(t, map[string]string{
		"// +groupName=x.example.com":                     "",
		"// +opgen:controller":                            "A",
		"// +opgen:inside":                                "",
		"// +opgen:detached":                              "B",
		"// B has a detached marker group above its doc.": "B",
		"// C is in a group.":                             "C",
	}, got)
}
