package gen

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

// GenerationContext adapts ctx to the context controller-tools' generators
// expect: roots (a subset of the shared roots: controller-tools' generators
// type-check every root they are given, so each gets only the packages it
// can generate for), the shared collector and checker, and an output rule
// that stages into ctx.Output, Go files beside their package and other
// files under configDir (relative to the project root).
func (c *Context) GenerationContext(configDir string, roots []*loader.Package) *genall.GenerationContext {
	return &genall.GenerationContext{
		Collector:  c.Collector,
		Roots:      roots,
		Checker:    c.Checker,
		InputRule:  genall.InputFromFileSystem,
		OutputRule: stagingRule{out: c.Output, configDir: c.Project.Abs(configDir)},
	}
}

// stagingRule is a genall.OutputRule that writes into an Output.
type stagingRule struct {
	out       *Output
	configDir string
}

func (r stagingRule) Open(pkg *loader.Package, itemPath string) (io.WriteCloser, error) {
	if pkg == nil {
		return &stagedFile{out: r.out, path: filepath.Join(r.configDir, itemPath)}, nil
	}
	if len(pkg.CompiledGoFiles) == 0 {
		return nil, fmt.Errorf("package %s has no files to write %s beside", pkg.PkgPath, itemPath)
	}
	return &stagedFile{out: r.out, path: filepath.Join(filepath.Dir(pkg.CompiledGoFiles[0]), itemPath)}, nil
}

type stagedFile struct {
	bytes.Buffer
	out  *Output
	path string
}

func (f *stagedFile) Close() error {
	if strings.HasSuffix(f.path, ".go") {
		// controller-tools formats what it writes.
		f.out.goFormatted(f.path, f.Bytes())
	} else {
		f.out.YAML(f.path, f.Bytes())
	}
	return nil
}
