package optest

import (
	"fmt"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	crdsample "github.com/opgen-sdk/opgen/pkg/sample"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// Sample fills into, a pointer to an object of kind gvk, with a sample
// built from the kind's CRD in ConfigDir/crd, as opgen generate builds the
// files of config/samples: every required field with a value its schema
// accepts, every defaulted field with its default. Built from the current
// CRD when the test runs, it keeps up as required fields are added.
// Patterns and CEL rules are not solved: a test sets the fields they
// constrain after Sample. The name is "<kind>-sample"; set ObjectMeta as
// the test needs.
func (k *Kit) Sample(t testing.TB, gvk schema.GroupVersionKind, into any) {
	t.Helper()
	if err := sample(filepath.Join(k.opts.ConfigDir, "crd"), gvk, into); err != nil {
		t.Fatalf("optest: %v", err)
	}
}

func sample(dir string, gvk schema.GroupVersionKind, into any) error {
	crds, err := testenv.ReadCRDs(dir)
	if err != nil {
		return err
	}
	for _, c := range crds {
		if c.Spec.Group != gvk.Group || c.Spec.Names.Kind != gvk.Kind {
			continue
		}
		for _, v := range c.Spec.Versions {
			if v.Name != gvk.Version {
				continue
			}
			data, err := crdsample.YAML(c, v)
			if err != nil {
				return err
			}
			if err := yaml.Unmarshal(data, into); err != nil {
				return fmt.Errorf("the sample %s does not fit %T: %w", gvk, into, err)
			}
			return nil
		}
	}
	return fmt.Errorf("no CRD in %s has %s; run go generate ./... to write it, or fix Options.ConfigDir", dir, gvk)
}
