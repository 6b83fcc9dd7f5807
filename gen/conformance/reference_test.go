package conformance_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/genall"
)

// refCRDDir is where the reference run writes its CRDs; opgen's are in
// config/crd.
var refCRDDir = filepath.Join("config", "crd-reference") + string(filepath.Separator)

// codeGenerators are code-generator's commands the suite runs, built from
// the versions the SDK's go.mod pins.
var codeGenerators = []string{"client-gen", "lister-gen", "informer-gen", "applyconfiguration-gen", "conversion-gen", "defaulter-gen"}

// reference are the options a project passes the reference tools, from its
// reference file: lines "controller-gen <crd options>", "objects false"
// (controller-gen's object generator is not run), "clients <options of
// applyconfiguration-gen>", each option as the tool takes it, and
// "conversion-gen <packages>" (the only packages conversion-gen is given,
// relative to the module; by default every package with its tag).
type reference struct {
	crd          crd.Generator
	noObjects    bool
	applyOptions []string
	conversions  []string
}

// readReference reads the reference file of the project dir, when it has
// one.
func readReference(t *testing.T, dir string) reference {
	t.Helper()
	ref := reference{crd: crd.Generator{OmitToolVersion: ptr.To(true)}}
	data, err := os.ReadFile(filepath.Join(dir, "reference"))
	if os.IsNotExist(err) {
		return ref
	}
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		tool, args, _ := strings.Cut(line, " ")
		switch tool {
		case "controller-gen":
			for _, opt := range strings.Fields(args) {
				switch opt {
				case "crd:generateEmbeddedObjectMeta=true":
					ref.crd.GenerateEmbeddedObjectMeta = ptr.To(true)
				case "crd:allowDangerousTypes=true":
					ref.crd.AllowDangerousTypes = ptr.To(true)
				case "crd:ignoreUnexportedFields=true":
					ref.crd.IgnoreUnexportedFields = ptr.To(true)
				default:
					t.Fatalf("%s/reference: controller-gen option %s is not known to the suite", dir, opt)
				}
			}
		case "objects":
			ref.noObjects = args == "false"
		case "clients":
			ref.applyOptions = strings.Fields(args)
		case "conversion-gen":
			ref.conversions = strings.Fields(args)
		default:
			t.Fatalf("%s/reference: unknown line %q", dir, line)
		}
	}
	return ref
}

// tools are the reference tools: controller-gen's generators, in process,
// and code-generator's commands, built once for the run.
type tools struct{ bin, header string }

// referenceTools builds code-generator's commands into a temporary
// directory. They are Go modules the SDK requires already, so the build
// needs nothing from outside the module cache.
func referenceTools(t *testing.T) tools {
	t.Helper()
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, c := range codeGenerators {
		args = append(args, "k8s.io/code-generator/cmd/"+c)
	}
	run(t, ".", "go", args...)
	header := filepath.Join(bin, "header.txt")
	require.NoError(t, os.WriteFile(header, []byte("// Written by the reference tools.\n"), 0o644))
	return tools{bin: bin, header: header}
}

// run runs the reference tools on the project in dir: controller-gen's
// crd and object generators, as `controller-gen object crd paths=./...`
// runs them; code-generator's clients for the packages that carry
// +genclient, as kube_codegen.sh's gen_client runs them, into
// pkg/generated; conversion-gen for the packages that carry
// +k8s:conversion-gen.
func (tl tools) run(t *testing.T, dir string, ref reference) {
	t.Helper()
	controllerGen(t, dir, ref)
	module := modulePath(t, dir)
	if clients := packagesWith(t, dir, "+genclient"); len(clients) > 0 {
		tl.clients(t, dir, module, clients, ref.applyOptions)
	}
	spokes := packagesWith(t, dir, "+k8s:conversion-gen=")
	if ref.conversions != nil {
		spokes = nil
		for _, p := range ref.conversions {
			spokes = append(spokes, module+"/"+p)
		}
	}
	if len(spokes) > 0 {
		tl.cmd(t, dir, "conversion-gen", append([]string{"--output-file", "zz_generated.conversion.go", "--go-header-file", tl.header}, spokes...)...)
	}
	if defaulted := packagesWith(t, dir, "+k8s:defaulter-gen="); len(defaulted) > 0 {
		tl.cmd(t, dir, "defaulter-gen", append([]string{"--output-file", "zz_generated.defaults.go", "--go-header-file", tl.header}, defaulted...)...)
	}
}

// controllerGen runs controller-tools' crd and object generators on the
// packages of dir, the CRDs into refCRDDir, with the project's options.
func controllerGen(t *testing.T, dir string, ref reference) {
	t.Helper()
	crdGen := genall.Generator(ref.crd)
	gens := genall.Generators{&crdGen}
	if !ref.noObjects {
		objGen := genall.Generator(deepcopy.Generator{})
		gens = append(gens, &objGen)
	}
	rt, err := gens.ForRootsWithConfig(&packages.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	rt.OutputRules = genall.OutputRules{Default: genall.OutputArtifacts{Config: genall.OutputToDirectory(filepath.Join(dir, refCRDDir))}}
	if rt.Run() {
		var errs []string
		for _, root := range rt.Roots {
			for _, e := range root.Errors {
				errs = append(errs, e.Error())
			}
		}
		t.Fatalf("controller-gen failed on %s: %s", dir, strings.Join(errs, "\n"))
	}
}

// clients runs client-gen, lister-gen, informer-gen and
// applyconfiguration-gen on pkgs, with the options opgen gives them.
func (tl tools) clients(t *testing.T, dir, module string, pkgs, applyOptions []string) {
	t.Helper()
	out := func(name string) []string {
		return []string{"--output-dir", filepath.Join(dir, "pkg", "generated", name), "--output-pkg", module + "/pkg/generated/" + name, "--go-header-file", tl.header}
	}
	var inputs []string
	for _, p := range pkgs {
		inputs = append(inputs, "--input", p)
	}
	apply := module + "/pkg/generated/applyconfiguration"
	tl.cmd(t, dir, "applyconfiguration-gen", append(append(out("applyconfiguration"), applyOptions...), pkgs...)...)
	tl.cmd(t, dir, "client-gen", append(append(out("clientset"), "--clientset-name", "versioned", "--input-base", "", "--apply-configuration-package", apply), inputs...)...)
	tl.cmd(t, dir, "lister-gen", append(out("listers"), pkgs...)...)
	tl.cmd(t, dir, "informer-gen", append(append(out("informers"),
		"--versioned-clientset-package", module+"/pkg/generated/clientset/versioned",
		"--listers-package", module+"/pkg/generated/listers"), pkgs...)...)
}

// cmd runs one of code-generator's commands in dir.
func (tl tools) cmd(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	run(t, dir, filepath.Join(tl.bin, name), args...)
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// modulePath reads the module path of dir's go.mod.
func modulePath(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	m := moduleLine.FindSubmatch(data)
	require.NotNil(t, m, "no module line in %s/go.mod", dir)
	return string(m[1])
}

// packagesWith returns the import paths of the packages of dir with a Go
// file that holds tag at the start of a comment line, sorted: the packages
// kube_codegen.sh gives the tag's generator.
func packagesWith(t *testing.T, dir, tag string) []string {
	t.Helper()
	module := modulePath(t, dir)
	found := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if regexp.MustCompile(`(?m)^\s*//\s*` + regexp.QuoteMeta(tag)).Match(data) {
			rel, _ := filepath.Rel(dir, filepath.Dir(p))
			found[module+"/"+filepath.ToSlash(rel)] = true
		}
		return nil
	})
	require.NoError(t, err)
	return sortedKeys(found)
}
