package dockerfile_test

import (
	"bytes"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/dockerfile"
)

// The Dockerfile cannot be built here (no container engine); BuildKit's own
// parser checks its syntax and its instructions' meaning.
func TestDockerfileParsesAsAMinimalNonRootBuild(t *testing.T) {
	data, err := dockerfile.Build(dockerfile.Options{Main: "./cmd/operator"})
	require.NoError(t, err)
	ast, err := parser.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Empty(t, ast.Warnings)
	stages, _, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err)
	require.Len(t, stages, 2)

	build, final := stages[0], stages[1]
	assert.Equal(t, "build", build.Name)
	assert.Equal(t, "golang:1.26", build.BaseName)
	assert.Equal(t, "gcr.io/distroless/static-debian12:nonroot", final.BaseName)

	var user *instructions.UserCommand
	var entry *instructions.EntrypointCommand
	var copied *instructions.CopyCommand
	for _, cmd := range final.Commands {
		switch c := cmd.(type) {
		case *instructions.UserCommand:
			user = c
		case *instructions.EntrypointCommand:
			entry = c
		case *instructions.CopyCommand:
			copied = c
		case *instructions.RunCommand:
			t.Errorf("the final stage runs %v; it must only copy the binary", c)
		}
	}
	require.NotNil(t, user)
	assert.Equal(t, "65532:65532", user.User)
	require.NotNil(t, entry)
	assert.Equal(t, []string{"/operator"}, entry.CmdLine)
	require.NotNil(t, copied)
	assert.Equal(t, "build", copied.From)

	var buildLine string
	for _, cmd := range build.Commands {
		if r, ok := cmd.(*instructions.RunCommand); ok {
			buildLine = r.String()
		}
	}
	assert.Contains(t, buildLine, "CGO_ENABLED=0 go build -trimpath")
	assert.Contains(t, buildLine, "./cmd/operator")
}

func TestBadMainPackageIsRejected(t *testing.T) {
	_, err := dockerfile.Build(dockerfile.Options{Main: "./cmd/my operator"})
	assert.ErrorContains(t, err, "pass a plain package path")
}
