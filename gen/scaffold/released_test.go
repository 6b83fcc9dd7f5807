package scaffold

import (
	"flag"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updating reports whether the run has -update, the flag of the golden
// tests of package scaffold_test (gentest), which this package cannot
// import.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestReleasedTemplatesKept: the binary keeps the templates of the last
// release (hack/apicheck/release.txt), so that opgen upgrade can merge
// the projects it scaffolded. At a release, run
//
//	go test ./gen/scaffold -run TestReleasedTemplatesKept -update
//
// after release.txt names the new tag: it writes the templates of
// project.go as they are into released/<tag>.
func TestReleasedTemplatesKept(t *testing.T) {
	data, err := os.ReadFile("../../hack/apicheck/release.txt")
	require.NoError(t, err)
	tag := strings.Fields(string(data))[0]
	dir := filepath.Join("released", tag)
	if _, err := os.Stat(dir); os.IsNotExist(err) && updating() {
		freeze(t, "project.go", dir)
	}
	require.Contains(t, ReleasedVersions(), tag, "the scaffold keeps no templates of %s, the last release: run go test ./gen/scaffold -run TestReleasedTemplatesKept -update", tag)
}

// TestReleasedTemplatesRender: each kept release's templates render with
// today's ProjectOptions, the Go ones to gofmt'd code.
func TestReleasedTemplatesRender(t *testing.T) {
	opts := ProjectOptions{Module: "example.com/widget-operator", Name: "widgets", OpgenVersion: "v0.9.0"}
	for _, v := range ReleasedVersions() {
		files, ok := RenderRelease(v, opts)
		require.True(t, ok, v)
		for _, f := range UpgradeFiles {
			assert.NotEmpty(t, files[f.Path], "%s of %s", f.Path, v)
		}
		assert.Contains(t, string(files["Makefile"]), "# Scaffolded by opgen "+v+".", v)
		assert.Contains(t, string(files["generate.go"]), " --name widgets", v)
	}
}

// freeze writes the templates of the Go file src (template.Must(template.New(name).Parse(text)))
// and the Dockerfile and .gitignore of today into dir.
func freeze(t *testing.T, src, dir string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, text := range templateSources(t, data) {
		if file, ok := releasedName[name]; ok {
			require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644))
		}
	}
	current, err := RenderFiles(ProjectOptions{Module: "example.com/x", OpgenVersion: "v0.0.0"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), current["Dockerfile"], 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gitignore"), []byte(gitignore), 0o644))
}

// templateSources returns the text of each template.Must(template.New(name).Parse(text))
// of a Go file, by name.
func templateSources(t *testing.T, src []byte) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	require.NoError(t, err)
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if name, text, ok := templateCall(n); ok {
			out[constant.StringVal(eval(t, name))] = constant.StringVal(eval(t, text))
		}
		return true
	})
	return out
}

// templateCall matches template.New(name).Parse(text).
func templateCall(n ast.Node) (name, text ast.Expr, ok bool) {
	parse, ok := n.(*ast.CallExpr)
	if !ok || len(parse.Args) != 1 {
		return nil, nil, false
	}
	sel, ok := parse.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Parse" {
		return nil, nil, false
	}
	newCall, ok := sel.X.(*ast.CallExpr)
	if !ok || len(newCall.Args) != 1 {
		return nil, nil, false
	}
	return newCall.Args[0], parse.Args[0], true
}

// eval evaluates a constant string expression of literals and +.
func eval(t *testing.T, e ast.Expr) constant.Value {
	switch e := e.(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(e.Value, e.Kind, 0)
	case *ast.BinaryExpr:
		return constant.BinaryOp(eval(t, e.X), e.Op, eval(t, e.Y))
	case *ast.ParenExpr:
		return eval(t, e.X)
	}
	t.Fatalf("template text is not a constant: %T", e)
	return nil
}
