package gen

import (
	"testing"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/stretchr/testify/assert"
)

// code-generator names the informer and apply-configuration packages after
// the API directory, not after the group; an API in apis/shop/v1 with the
// group store.example.com must be found under shop/v1.
func TestGeneratedPackagesFollowTheAPIDirectory(t *testing.T) {
	p := &Project{Options: Options{Root: "/src/p", ClientDir: "pkg/generated"}, ModuleDir: "/src/p", ModulePath: "example.com/p"}
	v := &model.Version{Group: &model.Group{Name: "store.example.com"}, Name: "v1", Dir: "/src/p/apis/shop/v1"}
	assert.Equal(t, "example.com/p/pkg/generated/informers/externalversions/shop/v1", p.InformersPackage(v))
	assert.Equal(t, "example.com/p/pkg/generated/applyconfiguration/shop/v1", p.ApplyConfigurationsPackage(v))
}
