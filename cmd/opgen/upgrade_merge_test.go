package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/scaffold"
)

// scaffoldedByV010 writes a project as opgen v0.1.0 scaffolded it, whose
// go.mod now requires v0.2.0 (go get ran), and returns its directory.
func scaffoldedByV010(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "widget-operator")
	opts := scaffold.ProjectOptions{Module: "example.com/widget-operator", Name: "widget-operator"}
	files, ok := scaffold.RenderRelease("v0.1.0", opts)
	require.True(t, ok, "this opgen keeps the templates of v0.1.0")
	files["go.mod"] = []byte("module example.com/widget-operator\n\ngo 1.26.0\n\nrequire github.com/opgen-sdk/opgen v0.2.0\n")
	for path, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, path), data, 0o644))
	}
	return dir
}

// edit replaces old with new in the project's file, once.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s: the edit's anchor", file)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

func read(t *testing.T, dir, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	require.NoError(t, err)
	return string(data)
}

// TestUpgradeMergesTheUsersEdits: a project of opgen v0.1.0 whose user
// changed the image of the Makefile, added a target and reworded the
// docker-build target, which the new template rewords too. The upgrade
// keeps the first two, takes the template's new targets and go:generate
// line, and marks the third as a conflict.
func TestUpgradeMergesTheUsersEdits(t *testing.T) {
	t.Parallel()
	dir := scaffoldedByV010(t)
	edit(t, dir, "Makefile", "IMG ?= $(NAME):dev\n", "IMG ?= registry.example.com/$(NAME):dev\n")
	edit(t, dir, "Makefile", "docker-build: ## Build the image $(IMG)\n", "docker-build: ## Build the image $(IMG) for the registry\n")
	mine := "\n.PHONY: lint\nlint: ## Run the linters\n\tgolangci-lint run ./...\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Makefile"), []byte(read(t, dir, "Makefile")+mine), 0o644))
	before := snapshot(t, dir)

	out, err := runUpgrade(t, dir)
	require.NoError(t, err)
	assert.Contains(t, out, "scaffolded by opgen v0.1.0; merging with the templates of opgen v0.2.0")
	assert.Contains(t, out, "base: the templates of opgen v0.1.0")
	assert.Contains(t, out, "+<<<<<<< Makefile (yours)\n")
	assert.Regexp(t, `\[Makefile generate.go\] would change, with 1 conflict\(s\) at Makefile:\d+`, out)
	assert.Equal(t, before, snapshot(t, dir), "without --write nothing is written")

	_, err = runUpgrade(t, dir, "--write")
	require.Error(t, err, "a write with conflicts fails")
	assert.Regexp(t, `wrote \[Makefile generate.go\] with 1 conflict\(s\), marked as git marks them .* at Makefile:\d+`, err.Error())
	makefile := read(t, dir, "Makefile")
	assert.Contains(t, makefile, "IMG ?= registry.example.com/$(NAME):dev\n", "the user's edit survives")
	assert.Contains(t, makefile, mine, "the user's target survives")
	assert.Contains(t, makefile, "\nimage: generate ## Build the image without Docker", "the template's new target arrives")
	assert.Contains(t, makefile, "# Scaffolded by opgen v0.2.0.\n", "the base of the next upgrade")
	assert.Contains(t, makefile, strings.Join([]string{
		"<<<<<<< Makefile (yours)",
		"docker-build: ## Build the image $(IMG) for the registry",
		"||||||| opgen v0.1.0",
		"docker-build: ## Build the image $(IMG)",
		"=======",
		"docker-build: ## Build the image $(IMG) with Docker, from the Dockerfile",
		">>>>>>> opgen v0.2.0",
	}, "\n")+"\n", "the conflicting edit is marked, with the old template between")
	assert.Contains(t, read(t, dir, "generate.go"), "go tool opgen generate --strict ./...", "generate.go takes the template's new line")
	assert.Equal(t, before["main.go"], read(t, dir, "main.go"), "main.go is merged only when named")
	assert.Equal(t, "opgen v0.2.0", scaffold.ScaffoldedBy(dir))
}

// TestUpgradeMergesNamedUserFiles: main.go, the user's, merges only when
// named; the --version flag of the new template arrives beside the
// user's own code.
func TestUpgradeMergesNamedUserFiles(t *testing.T) {
	t.Parallel()
	dir := scaffoldedByV010(t)
	edit(t, dir, "main.go", "controller.Setup)\n", "controller.Setup, extra.Setup)\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/bin/\n/.kube/\n/dist/\n"), 0o644))
	out, err := runUpgrade(t, dir, "--write", "main.go", ".gitignore")
	require.NoError(t, err)
	assert.Contains(t, out, "wrote [main.go]")
	main := read(t, dir, "main.go")
	assert.Contains(t, main, "controller.Setup, extra.Setup)\n")
	assert.Contains(t, main, `flag.BoolFunc("version"`)
	assert.Equal(t, "/bin/\n/.kube/\n/dist/\n", read(t, dir, ".gitignore"), "an unchanged template leaves the user's lines")
}
