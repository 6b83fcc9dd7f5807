package validation_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/pkg/validation"
	"github.com/opgen-sdk/opgen/pkg/validation/internal/testcases"
)

func load(t *testing.T) *validation.Set {
	t.Helper()
	var dirs []string
	for _, dir := range testcases.CRDDirs {
		dirs = append(dirs, filepath.Join("..", "..", dir))
	}
	s, err := validation.Load(dirs...)
	require.NoError(t, err)
	return s
}

// Messages renders errs as the server's status causes do.
func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.ErrorBody())
	}
	return out
}

func TestValidate(t *testing.T) {
	s := load(t)
	for _, c := range testcases.Creates {
		t.Run(c.Name, func(t *testing.T) {
			assert.Equal(t, c.Errors, messages(s.Validate(context.Background(), c.Object)))
		})
	}
}

func TestValidateUpdateRunsTransitionRules(t *testing.T) {
	s := load(t)
	u := testcases.Update
	assert.Equal(t, u.Errors, messages(s.ValidateUpdate(context.Background(), u.New, u.Old)))
	assert.Empty(t, s.ValidateUpdate(context.Background(), u.Old, u.Old))
}

func TestDefaultFillsDefaults(t *testing.T) {
	s := load(t)
	v := s.For(schema.GroupVersionKind{Group: "todo.example.com", Version: "v1", Kind: "Todo"})
	require.NotNil(t, v)
	obj := &todov1.Todo{Spec: todov1.TodoSpec{Title: "x"}}
	u, err := v.Default(obj)
	require.NoError(t, err)
	assert.Equal(t, "Pending", u.Object["spec"].(map[string]any)["state"])
	assert.Empty(t, obj.Spec.State, "Default must not change its argument")
	assert.Equal(t, "todo.example.com/v1", u.GetAPIVersion())
}

func TestUnknownKindSaysWhatToDo(t *testing.T) {
	s := load(t)
	errs := s.Validate(context.Background(), &metav1.Status{})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "set the object's apiVersion and kind")
}

// BenchmarkValidate measures one validation of an object with a CEL rule
// (go test ./pkg/validation -bench Validate -run ^$).
func BenchmarkValidate(b *testing.B) {
	s, err := validation.Load("../../examples/todo-operator/config/crd")
	require.NoError(b, err)
	obj := &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: todov1.TodoSpec{Title: "x"}}
	for b.Loop() {
		if errs := s.Validate(context.Background(), obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := validation.Load("../../examples/todo-operator/config/crd"); err != nil {
			b.Fatal(err)
		}
	}
}
