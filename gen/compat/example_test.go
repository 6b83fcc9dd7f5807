package compat_test

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/compat"
)

// ExampleCompare compares the CRD of a release with the next one, which
// lowers a maximum, makes a field required and adds an enum value (safe).
func ExampleCompare() {
	released := mustCRD(`
spec:
  names: {kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, maximum: 10}
              color: {type: string, enum: [red, green]}
`)
	next := mustCRD(`
spec:
  names: {kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, maximum: 5}
              color: {type: string, enum: [red, green, blue]}
`)
	for _, f := range compat.Compare(released, next) {
		fmt.Printf("%s: %s [%s]\n", f.Subject(), f.Change, f.Rule)
	}
	// Output:
	// Widget v1 spec.size: an optional field became required [required-added]
	// Widget v1 spec.size: maximum lowered from 10 to 5 [maximum-lowered]
}

func mustCRD(y string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(y), crd); err != nil {
		panic(err)
	}
	return crd
}
