package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAliasesReadLikeTheGroupAndVersion(t *testing.T) {
	api := &API{}
	group := func(name string, versions ...string) {
		g := &Group{Name: name}
		for _, v := range versions {
			g.Versions = append(g.Versions, &Version{Group: g, Name: v})
		}
		api.Groups = append(api.Groups, g)
	}
	// Sorted by name, as the model keeps them.
	group("batch.tutorial.kubebuilder.io", "v1", "v2")
	group("example.codegen.opgen.dev", "v1")
	group("example.test.codegen.opgen.dev", "v1")
	group("hello.example.com", "v1")
	group("my-group.example.com", "v1beta1")
	group("x.a", "v1")
	group("x.a.b", "v1")
	group("xa.b", "v1")
	assignAliases(api)
	var got []string
	for _, v := range api.Versions() {
		got = append(got, v.Alias())
	}
	assert.Equal(t, []string{
		"batchtutorialv1", "batchtutorialv2", // batchv1 is k8s.io/api/batch/v1's
		"examplev1",
		"exampletestv1",
		"hellov1",
		"mygroupv1beta1",
		"xv1",
		"xav1",
		"xabv1", // xav1 is x.a.b's
	}, got)
}
