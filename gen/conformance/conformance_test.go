package conformance_test

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/generators"
)

var update = flag.Bool("update", false, "rewrite testdata/*/warnings.txt")

// TestConformance runs opgen generate and the reference tools on each
// project of testdata and compares what they write. See the package doc.
func TestConformance(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	tools := referenceTools(t)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			ours, theirs := copyProject(t, dir), copyProject(t, dir)
			warnings := runOpgen(t, dir, ours)
			checkWarnings(t, dir, warnings)
			tools.run(t, theirs, readReference(t, dir))
			compareTrees(t, ours, theirs)
			checkLicense(t, dir, ours)
			goBuild(t, ours)
		})
	}
}

// runOpgen runs opgen generate on the project in root, with the flags of
// the project dir (its flags file, parsed as the command parses them), and
// returns its warnings, relative to root.
func runOpgen(t *testing.T, dir, root string) string {
	t.Helper()
	var flags cli.GenerateFlags
	set := pflag.NewFlagSet("opgen generate", pflag.ContinueOnError)
	flags.Register(set)
	if data, err := os.ReadFile(filepath.Join(dir, "flags")); err == nil {
		require.NoError(t, set.Parse(strings.Fields(string(data))), "%s/flags", dir)
	}
	gopts, err := flags.Options()
	require.NoError(t, err)
	if gopts.Layout == "kubebuilder" {
		cli.KubebuilderDefaults(&gopts.Options)
	}
	opts := gopts.Options
	opts.Root, opts.Force, opts.StampDir = root, true, "-"
	selected, err := generators.PickLayout(cmp.Or(gopts.Layout, "opgen"), gopts.Only)
	require.NoError(t, err)
	res, err := gen.Run(context.Background(), opts, selected)
	require.NoError(t, err, "opgen generate must accept what controller-gen and code-generator accept")
	var b strings.Builder
	for _, w := range (&gen.RunError{Errors: res.Warnings}).Relative(root).Errors {
		b.WriteString(w.Error() + "\n")
	}
	return b.String()
}

// checkWarnings compares the warnings of a run with the project's
// warnings.txt.
func checkWarnings(t *testing.T, dir, got string) {
	t.Helper()
	path := filepath.Join(dir, "warnings.txt")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./gen/conformance -update to write %s", path)
	assert.Equal(t, string(want), got, "the warnings of opgen generate")
}

// compareTrees compares every file the reference tools wrote in theirs
// (see referenceTools.run) with the file opgen wrote in ours, after their
// headers: CRDs, deep copies, clients, conversions.
func compareTrees(t *testing.T, ours, theirs string) {
	t.Helper()
	compared := 0
	err := filepath.WalkDir(theirs, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(theirs, p)
		if !written(rel) {
			return nil
		}
		ourPath := filepath.Join(ours, rel)
		if strings.HasPrefix(rel, refCRDDir) {
			ourPath = filepath.Join(ours, "config", "crd", strings.TrimPrefix(rel, refCRDDir))
		}
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		got, err := os.ReadFile(ourPath)
		if !assert.NoError(t, err, "opgen wrote no %s, which the reference tools wrote", rel) {
			return nil
		}
		if filepath.Base(rel) == "zz_generated.deepcopy.go" {
			assertSuperset(t, rel, want, got)
		} else {
			assert.Equal(t, body(string(want)), body(string(got)), "%s differs from the reference tools'", rel)
		}
		compared++
		return nil
	})
	require.NoError(t, err)
	assert.NotZero(t, compared, "the reference tools wrote nothing to compare")
}

// assertSuperset checks that every declaration of the reference's deep
// copies is in opgen's, the same. opgen may declare more: it deep-copies
// every type of an API package, as if the package said
// +kubebuilder:object:generate=true, so that a root kind's DeepCopyInto
// never calls a method controller-gen did not write.
func assertSuperset(t *testing.T, rel string, want, got []byte) {
	t.Helper()
	theirs, ours := declarations(t, want), declarations(t, got)
	for _, name := range sortedKeys(theirs) {
		assert.Equal(t, theirs[name], ours[name], "%s: %s differs from the reference tools'", rel, name)
	}
}

// declarations returns the top-level declarations of a Go file, by name
// (Type.Method for methods), as source.
func declarations(t *testing.T, src []byte) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	require.NoError(t, err)
	out := map[string]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil {
			name = string(src[fset.Position(fn.Recv.Pos()).Offset:fset.Position(fn.Recv.End()).Offset]) + "." + name
		}
		out[name] = string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset])
	}
	return out
}

// written reports whether a file of the reference tree is one the tools
// wrote.
func written(rel string) bool {
	base := filepath.Base(rel)
	return strings.HasPrefix(rel, refCRDDir) ||
		strings.HasPrefix(rel, filepath.Join("pkg", "generated")+string(filepath.Separator)) ||
		base == "zz_generated.deepcopy.go" || base == "zz_generated.conversion.go" || base == "zz_generated.defaults.go"
}

// header is the comment block, build constraints and blank lines a file
// starts with: each tool writes its own.
var header = regexp.MustCompile(`(?s)\A(?:(?://|#)[^\n]*\n|/\*.*?\*/[^\n]*\n|\n)*`)

// importBlock is a Go file's import block.
var importBlock = regexp.MustCompile(`(?s)\nimport \(\n.*?\n\)\n`)

// body is a file without its header. The imports of Go are made one
// group and gofmt'd, which sorts them: gengo writes them in map order,
// and code-generator's commands group the standard library's apart,
// which opgen's in-process run does not.
func body(s string) string {
	s = header.ReplaceAllString(s, "")
	s = importBlock.ReplaceAllStringFunc(s, func(block string) string {
		return strings.ReplaceAll(strings.TrimSuffix(block, "\n"), "\n\n", "\n") + "\n"
	})
	if formatted, err := format.Source([]byte(s)); err == nil {
		return string(formatted)
	}
	return s
}

// copyProject copies the project dir to a new temporary directory. Its
// go.mod replaces the SDK with the checkout, by a path relative to dir,
// which the copy makes absolute.
func copyProject(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	require.NoError(t, os.CopyFS(out, os.DirFS(dir)))
	for _, name := range []string{"flags", "warnings.txt"} {
		_ = os.Remove(filepath.Join(out, name))
	}
	mod := filepath.Join(out, "go.mod")
	data, err := os.ReadFile(mod)
	require.NoError(t, err)
	sdk, err := filepath.Abs(filepath.Join(dir, "..", "..", "..", ".."))
	require.NoError(t, err)
	data = bytes.ReplaceAll(data, []byte("=> ../../../.."), []byte("=> "+sdk))
	require.NoError(t, os.WriteFile(mod, data, 0o644))
	return out
}

// goBuild builds, vets and tests every package of the module in dir: what
// opgen writes compiles, and tests it writes (round trips) pass beside the
// project's own.
func goBuild(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}, {"test", "./..."}} {
		run(t, dir, "go", args...)
	}
}

// checkLicense checks that every Go file opgen wrote in root starts with
// the licence of the project's --header-file (after its build constraint,
// as controller-gen writes them), when its flags give one.
func checkLicense(t *testing.T, dir, root string) {
	t.Helper()
	flags, _ := os.ReadFile(filepath.Join(dir, "flags"))
	fields := strings.Fields(string(flags))
	for i, f := range fields {
		if f != "--header-file" || i+1 == len(fields) {
			continue
		}
		license, err := os.ReadFile(filepath.Join(root, fields[i+1]))
		require.NoError(t, err)
		checked := 0
		require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || !gen.IsGenerated(p) {
				return err
			}
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			// A build constraint goes first, as gofmt keeps it.
			text := strings.TrimPrefix(string(data), gen.IgnoreAutogenerated+"\n\n")
			assert.True(t, strings.HasPrefix(text, strings.TrimSpace(string(license))), "%s does not start with the licence of %s", p, fields[i+1])
			checked++
			return nil
		}))
		assert.NotZero(t, checked, "opgen wrote no Go file to check the licence of")
	}
}

// run runs a command in dir and fails the test with its output when it
// fails.
func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "%s %s in %s:\n%s", name, strings.Join(args, " "), dir, out.String())
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
