package scaffold_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/scaffold"
)

// writeCRD writes the names of the Todo CRD that a generate run would.
func writeCRD(t *testing.T, root, plural, scope string) {
	t.Helper()
	dir := filepath.Join(root, "config/crd")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: todo.example.com\n  scope: " + scope +
		"\n  names:\n    kind: Todo\n    plural: " + plural + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "todo.example.com_todos.yaml"), []byte(crd), 0o644))
}

// TestRefreshTestsFollowsTheCRD: create api names the clientset's method
// after the kind's default plural (Todoes); the path marker makes it
// Todos, and the untouched test follows, while an edited one gets a
// warning with the rename instead.
func TestRefreshTestsFollowsTheCRD(t *testing.T) {
	p := newProject(t)
	_, err := scaffold.CreateAPI(p, scaffold.APIOptions{Group: "todo.example.com", Version: "v1", Kind: "Todo"})
	require.NoError(t, err)
	test := filepath.Join(p.Root, "internal/controller/todo_test.go")
	scaffolded, err := os.ReadFile(test)
	require.NoError(t, err)
	require.Contains(t, string(scaffolded), ".TodoV1().Todoes(kit.Namespace(t))")

	writeCRD(t, p.Root, "todoes", "Namespaced")
	rewritten, warnings, err := scaffold.RefreshTests(p.Root, "internal/controller", "config/crd")
	require.NoError(t, err)
	assert.Empty(t, rewritten, "the CRD has the names the test was written with")
	assert.Empty(t, warnings)

	writeCRD(t, p.Root, "todos", "Namespaced")
	rewritten, warnings, err = scaffold.RefreshTests(p.Root, "internal/controller", "config/crd")
	require.NoError(t, err)
	assert.Equal(t, []string{"internal/controller/todo_test.go"}, rewritten)
	assert.Empty(t, warnings)
	refreshed, err := os.ReadFile(test)
	require.NoError(t, err)
	assert.Contains(t, string(refreshed), ".TodoV1().Todos(kit.Namespace(t))")
	assert.NotContains(t, string(refreshed), "Todoes")

	edited := append(refreshed, []byte("\n// mine\n")...)
	require.NoError(t, os.WriteFile(test, edited, 0o644))
	writeCRD(t, p.Root, "todos", "Cluster")
	rewritten, warnings, err = scaffold.RefreshTests(p.Root, "internal/controller", "config/crd")
	require.NoError(t, err)
	assert.Empty(t, rewritten, "an edited test is the user's")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "internal/controller/todo_test.go calls TodoV1().Todos(kit.Namespace(t)), which the clientset names TodoV1().Todos()")
	kept, err := os.ReadFile(test)
	require.NoError(t, err)
	assert.Equal(t, string(edited), string(kept))
}
