// Package testcases holds the objects, valid and invalid, that the
// validation tests check both in-process and against a real API server,
// so that the two are compared on the same inputs. Only tests import it.
package testcases

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	hellov1 "github.com/opgen-sdk/opgen/examples/hello-operator/apis/hello/v1"
	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
)

// CRDDirs are the CRD directories of the objects, relative to the
// repository's root.
var CRDDirs = []string{
	"examples/hello-operator/config/crd",
	"examples/todo-operator/config/crd",
	"gen/internal/fixture/config/crd",
	"gen/k8stags/testdata/tags/config/crd",
}

// Case is one object and the field errors the server gives for it
// ("field: message" as field.Error.Field and ErrorBody), none when valid.
type Case struct {
	Name   string
	Object runtime.Object
	Errors []string
}

// celSkipped is the note the server adds when a schema error keeps it
// from evaluating the kind's CEL rules.
const celSkipped = `<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`

// Creates are checked as creates.
var Creates = []Case{
	{
		Name:   "greeting valid",
		Object: greeting("hello"),
	},
	{
		Name:   "greeting empty",
		Object: greeting(""),
		Errors: []string{`spec.greeting: Invalid value: "": spec.greeting in body should be at least 1 chars long`},
	},
	{
		Name:   "todo valid",
		Object: todo("write tests", ""),
	},
	{
		Name:   "todo bad state",
		Object: todo("write tests", "Later"),
		Errors: []string{`spec.state: Unsupported value: "Later": supported values: "Pending", "InProgress", "Done"`, celSkipped},
	},
	{
		Name: "todo without title",
		Object: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "todo.example.com/v1", "kind": "Todo",
			"metadata": map[string]any{"name": "t"},
			"spec":     map[string]any{"description": "no title"},
		}},
		Errors: []string{`spec.title: Required value`, celSkipped},
	},
	{
		Name:   "widget valid",
		Object: widget(3, 1),
	},
	{
		Name:   "widget CEL rule",
		Object: widget(1, 3),
		Errors: []string{`spec: Invalid value: minReplicas must not exceed replicas`},
	},
}

// Update is an update that a transition rule (oldSelf) refuses.
var Update = struct {
	Old, New runtime.Object
	Errors   []string
}{
	Old:    todo("ship", "Done"),
	New:    todo("ship", "Pending"),
	Errors: []string{`spec: Invalid value: a Done todo cannot go back to Pending`},
}

func greeting(text string) *hellov1.Greeting {
	return &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: "g"},
		Spec:       hellov1.GreetingSpec{Greeting: text},
	}
}

func todo(title string, state todov1.State) *todov1.Todo {
	return &todov1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Spec:       todov1.TodoSpec{Title: title, State: state},
	}
}

func widget(replicas, minReplicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "fixture.opgen.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec": map[string]any{
			"owner":       "team-a",
			"replicas":    replicas,
			"minReplicas": minReplicas,
		},
	}}
}
