package lean

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"
	ctdeepcopy "sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

func TestStripBodies(t *testing.T) {
	// Each case is the source before a body, the body, which stripBodies
	// blanks out, and the source after it, which it keeps.
	for name, tc := range map[string][3]string{
		"a function": {
			"package p\nfunc F(a int) (int, error) {", "\n\treturn a, nil\n", "}\n",
		},
		"braces in strings, runes and comments": {
			"package p\nfunc F() {", " _ = \"}\"; _ = '}'; _ = `}` /* } */ // }\n", "}\n",
		},
		"struct and interface results": {
			"package p\nfunc (r *T) M() (struct{ a int }, interface{ N() }) {", " return ", "}\n",
		},
		"a function type result": {
			"package p\nfunc F() func() int {", " return nil ", "}\n",
		},
		"generic": {
			"package p\nfunc F[T any, S ~[]T](s S) T {", " var t T; return t ", "}\n",
		},
		"no body, a comment after it": {
			"package p\nfunc nanotime() int64 // in assembly.\nvar x = T{a: 1}\n", "", "",
		},
		"func types in declarations": {
			"package p\ntype F func(int) error\nvar c = make(chan func(), 1)\nvar p atomic.Pointer[func()]\nfunc G() {", " x() ", "}\n",
		},
		"a function literal in a var": {
			"package p\nvar f = func() int {", " return 1 ", "}()\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			before, body, after := tc[0], tc[1], tc[2]
			blank := strings.Map(func(r rune) rune {
				if r == '\n' {
					return r
				}
				return ' '
			}, body)
			assert.Equal(t, before+blank+after, string(stripBodies([]byte(before+body+after))))
		})
	}
}

// TestStripBodiesKeepsEveryDeclaration parses packages of the standard
// library with their bodies stripped: every file parses, every
// declaration is where it was, and no function keeps a statement.
func TestStripBodiesKeepsEveryDeclaration(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	for _, pkg := range []string{"runtime", "net/http", "reflect", "go/types"} {
		files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(goroot)), "src", pkg, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, name := range files {
			src, err := os.ReadFile(name)
			require.NoError(t, err)
			full, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
			require.NoError(t, err)
			lean, err := parser.ParseFile(token.NewFileSet(), name, stripBodies(src), parser.SkipObjectResolution)
			require.NoError(t, err, "%s does not parse stripped", name)
			require.Len(t, lean.Decls, len(full.Decls), name)
			for i, d := range full.Decls {
				assert.Equal(t, d.Pos(), lean.Decls[i].Pos(), "%s: declaration %d moved", name, i)
				assert.Equal(t, d.End(), lean.Decls[i].End(), "%s: declaration %d moved", name, i)
				if fd, ok := lean.Decls[i].(*ast.FuncDecl); ok && fd.Body != nil {
					assert.Empty(t, fd.Body.List, "%s: %s keeps its body", name, fd.Name.Name)
				}
			}
		}
	}
}

// TestLeanDependenciesKeepWhatTheAPITypesReach type-checks the API
// packages of the golden project and of the fixture twice, with the
// dependencies' full syntax and with their lean syntax, and compares what
// the generators read of every type the API types reach through their
// fields: its underlying type, the names of its methods, and the
// signatures of its deep-copy methods (the deepcopy generator calls them).
func TestLeanDependenciesKeepWhatTheAPITypesReach(t *testing.T) {
	for _, dir := range []string{"../../testdata/golden", "../fixture"} {
		t.Run(dir, func(t *testing.T) {
			full := reachedTypes(t, dir, false)
			lean := reachedTypes(t, dir, true)
			require.NotEmpty(t, full)
			assert.Equal(t, full, lean)
		})
	}
}

// reachedTypes loads the project in dir, type-checks its API packages
// (those under apis/) and describes every named type they reach.
func reachedTypes(t *testing.T, dir string, lean bool) map[string]string {
	t.Helper()
	cfg := &packages.Config{Dir: dir, Env: append(os.Environ(), "CGO_ENABLED=0")} // gen.LoadEnv
	roots, err := loader.LoadRootsWithConfig(cfg, "./...")
	require.NoError(t, err)
	var apis []*loader.Package
	for _, r := range roots {
		if strings.Contains(r.PkgPath, "/apis/") && len(r.GoFiles) > 0 {
			apis = append(apis, r)
		}
	}
	checker := &loader.TypeChecker{NodeFilters: []loader.NodeFilter{ctcrd.Generator{}.CheckFilter(), ctdeepcopy.Generator{}.CheckFilter()}}
	if lean {
		Dependencies(cfg.Fset, checker, apis)
	}
	out := map[string]string{}
	var describe func(typ types.Type)
	describe = func(typ types.Type) {
		switch typ := typ.(type) {
		case *types.Named:
			key := typ.String()
			if _, seen := out[key]; seen {
				return
			}
			ms := types.NewMethodSet(types.NewPointer(typ))
			var methods []string
			for i := range ms.Len() {
				m := ms.At(i).Obj()
				if strings.HasPrefix(m.Name(), "DeepCopy") {
					methods = append(methods, m.String())
				} else {
					methods = append(methods, m.Name())
				}
			}
			sort.Strings(methods)
			out[key] = typ.Underlying().String() + " methods: " + strings.Join(methods, "; ")
			describe(typ.Underlying())
		case *types.Pointer:
			describe(typ.Elem())
		case *types.Slice:
			describe(typ.Elem())
		case *types.Array:
			describe(typ.Elem())
		case *types.Map:
			describe(typ.Key())
			describe(typ.Elem())
		case *types.Struct:
			for i := range typ.NumFields() {
				describe(typ.Field(i).Type())
			}
		}
	}
	for _, p := range apis {
		checker.Check(p)
		for _, name := range p.Types.Scope().Names() {
			if tn, ok := p.Types.Scope().Lookup(name).(*types.TypeName); ok {
				if _, isIface := tn.Type().Underlying().(*types.Interface); !isIface {
					describe(tn.Type())
				}
			}
		}
	}
	return out
}
