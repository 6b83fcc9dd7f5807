// Package samples writes one sample object per kind and version into
// config/samples/<group>_<version>_<kind>.yaml, once: a sample is the
// user's file as soon as it exists and is never overwritten (delete it to
// get a fresh one from the current schema). Package pkg/sample builds
// them from the run's CRDs.
package samples

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/pkg/sample"
)

// Dir is where the samples go, relative to the project root.
const Dir = "config/samples"

// Generator writes the samples that do not exist yet.
type Generator struct{ gen.FromCRDs }

var (
	_ gen.Generator = Generator{}
	_ gen.CRDReader = Generator{}
)

// Generate stages a sample per kind and version, written only when missing.
func (Generator) Generate(ctx *gen.Context) error {
	crds := ctx.CRDs()
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			data, err := sample.YAML(c, v)
			if err != nil {
				return err
			}
			path := ctx.Project.Abs(filepath.Join(Dir, FileName(c, v)))
			if _, err := os.Stat(path); err == nil {
				continue // the user's now
			}
			ctx.Output.Scaffold(path, data)
		}
	}
	return nil
}

// FileName is the sample's file name: <group>_<version>_<kind>.yaml, the
// kind in lower case.
func FileName(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) string {
	return fmt.Sprintf("%s_%s_%s.yaml", c.Spec.Group, v.Name, strings.ToLower(c.Spec.Names.Kind))
}
