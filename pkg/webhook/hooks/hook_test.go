package hooks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHookNames(t *testing.T) {
	t.Parallel()
	gvk := schema.GroupVersionKind{Group: "todo.example.com", Version: "v1", Kind: "Todo"}
	v := Hook{Type: Validating, GVK: gvk, Resource: "todos", Namespaced: true}
	m := Hook{Type: Mutating, GVK: gvk, Resource: "todos", Namespaced: true}
	assert.Equal(t, "/validate-todo-example-com-v1-todo", v.Path())
	assert.Equal(t, "/mutate-todo-example-com-v1-todo", m.Path())
	assert.Equal(t, "vtodo.todo.example.com", v.Name())
	assert.Equal(t, "mtodo.todo.example.com", m.Name())
	ops := func(h Hook) []admissionregistrationv1.OperationType { return h.Operations() }
	assert.Equal(t, []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}, ops(v), "no delete check, no DELETE")
	assert.Equal(t, []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}, ops(m))
	v.Delete, m.Delete = true, true
	assert.Equal(t, []admissionregistrationv1.OperationType{"CREATE", "UPDATE", "DELETE"}, ops(v), "a delete check")
	assert.Equal(t, []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}, ops(m), "defaulting never runs on DELETE")
}

func TestConfigurations(t *testing.T) {
	t.Parallel()
	gvk := schema.GroupVersionKind{Group: "todo.example.com", Version: "v1", Kind: "Todo"}
	hooks := []Hook{{Type: Validating, GVK: gvk, Resource: "todos", Namespaced: true}, {Type: Mutating, GVK: gvk, Resource: "todos", Namespaced: true}}
	v, m := Configurations("todo-operator", "todo-system", hooks, ServiceClientConfig("todo-operator", "todo-system", nil))
	if assert.NotNil(t, v) && assert.Len(t, v.Webhooks, 1) {
		w := v.Webhooks[0]
		assert.Equal(t, "todo-operator-validating", v.Name)
		assert.Equal(t, "/validate-todo-example-com-v1-todo", *w.ClientConfig.Service.Path)
		assert.Equal(t, "todo-operator-webhook", w.ClientConfig.Service.Name)
		assert.Equal(t, []string{"todo-system"}, w.NamespaceSelector.MatchExpressions[0].Values)
	}
	if assert.NotNil(t, m) && assert.Len(t, m.Webhooks, 1) {
		assert.Equal(t, "https://127.0.0.1:1234/convert", *Conversion(URLClientConfig("https://127.0.0.1:1234", []byte("ca"))).Webhook.ClientConfig.URL)
	}
	v, m = Configurations("x", "", hooks[:1], URLClientConfig("https://127.0.0.1:1", nil))
	assert.Nil(t, m)
	assert.Nil(t, v.Webhooks[0].NamespaceSelector, "no namespace, nothing to exclude")
}
