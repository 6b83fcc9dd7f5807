package scaffold_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/scaffold"
)

// The whole flow (init, create api, generate, build, run) is the hello
// tutorial's test in docs/tutorials; these check the scaffold itself.

func TestInitProjectWritesAProject(t *testing.T) {
	dir := t.TempDir()
	created, err := scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/team/hello-operator", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	var names []string
	for _, f := range created.Files {
		rel, _ := filepath.Rel(dir, f)
		names = append(names, rel)
	}
	assert.Equal(t, []string{".gitignore", "Dockerfile", "Makefile", "README.md", "generate.go", "go.mod", "internal/controller/doc.go", "main.go"}, names)

	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "module example.com/team/hello-operator\n")
	assert.Contains(t, string(gomod), "require github.com/opgen-sdk/opgen v0.3.0\n")
	assert.Contains(t, string(gomod), "tool github.com/opgen-sdk/opgen/cmd/opgen\n")
	assert.NotContains(t, string(gomod), "replace")

	main, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(main), `runtime.Options{Name: "hello-operator"}`)
	assert.Contains(t, string(main), `"example.com/team/hello-operator/internal/controller"`)
	assert.Contains(t, string(main), `flag.BoolFunc("version"`, "the operator answers --version without a cluster")

	gen, err := os.ReadFile(filepath.Join(dir, "generate.go"))
	require.NoError(t, err)
	assert.Contains(t, string(gen), "//go:generate go tool opgen generate --strict ./...\n")
	assert.Contains(t, string(gen), "// Scaffolded by opgen v0.3.0 ")
	makefile, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	require.NoError(t, err)
	assert.Contains(t, string(makefile), "# Scaffolded by opgen v0.3.0.\n")
}

// TestMakeHelpPrintsValues runs `make help` in a new project: the targets'
// descriptions show the values of NAME, IMG and NAMESPACE, not their names.
func TestMakeHelpPrintsValues(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH; install make (GNU make) to run this test")
	}
	dir := t.TempDir()
	_, err = scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/team/hello-operator", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	cmd := exec.Command(makeBin, "help", "IMG=registry.example.com/hello:v1")
	cmd.Dir = dir
	cmd.Env = makeEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	help := string(out)
	assert.NotContains(t, help, "$(")
	assert.Contains(t, help, "make TARGET [NAME=hello-operator] [IMG=registry.example.com/hello:v1] [NAMESPACE=hello-operator-system]")
	assert.Contains(t, help, "Write deploy/hello-operator.yaml: CRDs, RBAC, ServiceAccount and a Deployment of registry.example.com/hello:v1")
	assert.Contains(t, help, "Build bin/hello-operator")
}

// TestInitProjectRecordsAnotherName: a --name that opgen generate would
// not derive from the module path goes into the go:generate line, so the
// roles and the runtime's Name agree.
func TestInitProjectRecordsAnotherName(t *testing.T) {
	dir := t.TempDir()
	_, err := scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/team/hello-operator/v2", Name: "greeter", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	gen, err := os.ReadFile(filepath.Join(dir, "generate.go"))
	require.NoError(t, err)
	assert.Contains(t, string(gen), "//go:generate go tool opgen generate --strict ./... --name greeter\n")

	dir = t.TempDir()
	_, err = scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/team/hello-operator/v2", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	main, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(main), `runtime.Options{Name: "hello-operator"}`, "the major version suffix is not the name")
	gen, err = os.ReadFile(filepath.Join(dir, "generate.go"))
	require.NoError(t, err)
	assert.Contains(t, string(gen), "//go:generate go tool opgen generate --strict ./...\n")
}

func TestInitProjectReplacesOpgenForDevelopmentBuilds(t *testing.T) {
	dir := t.TempDir()
	_, err := scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/x", Replace: "/src/opgen"})
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "replace github.com/opgen-sdk/opgen => /src/opgen\n")
}

func TestInitProjectRefusesBadInputAndWritesNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		opts scaffold.ProjectOptions
		want []string
	}{
		"bad module and name": {
			opts: scaffold.ProjectOptions{Module: "not a module", Name: "Bad_Name", OpgenVersion: "v0.1.0"},
			want: []string{`--module "not a module" is not a module path`, `--name "Bad_Name" must be a DNS label`},
		},
		"development build without replace": {
			opts: scaffold.ProjectOptions{Module: "example.com/x"},
			want: []string{"pass --replace with the path of your opgen checkout"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := scaffold.InitProject(dir, tc.opts)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "a failed init writes nothing")
		})
	}
}

func TestInitProjectNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main // mine\n"), 0o644))
	_, err := scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/x", OpgenVersion: "v0.1.0"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "main.go exists: opgen init never overwrites")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1)
	data, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	assert.True(t, strings.Contains(string(data), "mine"))
}

// TestMakefileClusterTargets runs make -n on the scaffold's install,
// uninstall, deploy and undeploy with a fake go: each pipes opgen
// manifests (with the image for deploy and undeploy only) into kubectl, the
// one on PATH when there is one, else the one in opgen's control-plane
// cache.
func TestMakefileClusterTargets(t *testing.T) {
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed: install GNU make to run it")
	}
	dir := t.TempDir()
	_, err = scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/hello-operator", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	bin := t.TempDir()
	fakeGo := filepath.Join(bin, "fakego")
	require.NoError(t, os.WriteFile(fakeGo, []byte("#!/bin/sh\n[ \"$*\" = \"tool opgen controlplane --print-dir\" ] && echo /cache/controlplane\n"), 0o755))
	makeN := func(path string, targets ...string) string {
		t.Helper()
		cmd := exec.Command(makePath, append([]string{"-n", "GO=" + fakeGo, "IMG=registry.example.com/hello:v1"}, targets...)...)
		cmd.Dir = dir
		cmd.Env = makeEnv("PATH=" + path)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	noKubectl := t.TempDir() // make's shell needs only its builtins
	manifests := fakeGo + " tool opgen manifests --name hello-operator --namespace hello-operator-system"
	out := makeN(noKubectl, "uninstall", "undeploy")
	assert.Contains(t, out, manifests+" --out - | /cache/controlplane/kubectl delete --ignore-not-found --wait=false -f -\n")
	assert.Contains(t, out, manifests+" --image registry.example.com/hello:v1 --out - | /cache/controlplane/kubectl delete --ignore-not-found --wait=false -f -\n")

	kubectl := filepath.Join(bin, "kubectl")
	require.NoError(t, os.WriteFile(kubectl, []byte("#!/bin/sh\n"), 0o755))
	out = makeN(bin+":"+noKubectl, "install", "deploy")
	assert.Contains(t, out, manifests+" --out - | "+kubectl+" apply --server-side --force-conflicts -f -\n")
	assert.Contains(t, out, manifests+" --image registry.example.com/hello:v1 --out - | "+kubectl+" apply --server-side --force-conflicts -f -\n")

	cmd := exec.Command(makePath, "help")
	cmd.Dir = dir
	help, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", help)
	for _, target := range []string{"install", "uninstall", "deploy", "undeploy"} {
		assert.Regexp(t, `(?m)^  `+target+` +\S`, string(help))
	}
}

// TestMakefileTargets: the targets init --help names are those of the
// Makefile, as make help lists them.
func TestMakefileTargets(t *testing.T) {
	targets := scaffold.MakefileTargets()
	for _, want := range []string{"help", "generate", "manifests", "run", "dev", "test", "build", "image"} {
		assert.Contains(t, targets, want)
	}
	assert.NotContains(t, targets, ".PHONY")
}
