package gen_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

// innerType is a struct of the API package that WidgetSpec's field may be.
const innerType = `
// Inner is a nested struct.
type Inner struct {
	Port int32 ` + "`json:\"port\"`" + `
	Name string ` + "`json:\"name,omitempty\"`" + `
}
`

// TestCacheSpec: +opgen:controller:cacheSpec writes the projection the
// controller options carry, a whole field or a field of a nested struct,
// and a path that names no field, or goes into what is not a struct of
// the package, fails at the marker with what to write.
func TestCacheSpec(t *testing.T) {
	t.Parallel()
	glue := func(t *testing.T, marker, fieldType string) (string, error) {
		dir := writeFuzzProject(t, fmt.Sprintf(fuzzTypes, "+opgen:controller\n// "+marker, "", fieldType)+innerType)
		res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
		if err != nil {
			return "", err
		}
		return string(res.Output.Files()[filepath.Join(mustAbs(t, dir), "internal/controller/zz_generated.controllers.go")]), nil
	}
	t.Run("whole field", func(t *testing.T) {
		out, err := glue(t, "+opgen:controller:cacheSpec=field", "string")
		require.NoError(t, err)
		assert.Regexp(t, `Project:\s+projectWidget,`, out)
		assert.Regexp(t, `CacheSpec:\s+\[\]string\{"field"\},`, out)
		assert.Regexp(t, `func projectWidget\(o \*fuzzv1\.Widget\) \{\s+o\.Spec = fuzzv1\.WidgetSpec\{Field: o\.Spec\.Field\}`, out)
	})
	t.Run("nested field", func(t *testing.T) {
		out, err := glue(t, "+opgen:controller:cacheSpec=field.port", "Inner")
		require.NoError(t, err)
		assert.Regexp(t, `o\.Spec = fuzzv1\.WidgetSpec\{Field: fuzzv1\.Inner\{Port: o\.Spec\.Field\.Port\}\}`, out)
		assert.Regexp(t, `CacheSpec:\s+\[\]string\{"field\.port"\},`, out)
	})
	t.Run("no marker, no projection", func(t *testing.T) {
		out, err := glue(t, "+opgen:controller:workers=2", "string")
		require.NoError(t, err)
		assert.NotContains(t, out, "Project")
	})
	for _, c := range []struct{ name, marker, fieldType, want string }{
		{"unknown field", "+opgen:controller:cacheSpec=nope", "string", `apis/v1/types.go:20:1: Widget has +opgen:controller:cacheSpec=nope, but WidgetSpec has no field with the JSON name "nope"`},
		{"into a string", "+opgen:controller:cacheSpec=field.port", "string", "WidgetSpec.field is not a struct of the kind's package"},
		{"into a pointer", "+opgen:controller:cacheSpec=field.port", "*Inner", "name field whole"},
		{"not a path", "+opgen:controller:cacheSpec=field port", "string", `"field port" is not a field path`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := glue(t, c.marker, c.fieldType)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
