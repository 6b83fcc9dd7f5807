package validation_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/pkg/validation"
)

// ExampleLoad validates a typed object against the CRDs of a project, as
// a unit test would, without a server.
func ExampleLoad() {
	crds, err := validation.Load("../../examples/todo-operator/config/crd")
	if err != nil {
		fmt.Println(err)
		return
	}
	todo := &todov1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Spec:       todov1.TodoSpec{Title: "", State: "Later"},
	}
	for _, e := range crds.Validate(context.Background(), todo) {
		fmt.Println(e)
	}
	// Output:
	// spec.state: Unsupported value: "Later": supported values: "Pending", "InProgress", "Done"
	// spec.title: Invalid value: "": spec.title in body should be at least 1 chars long
	// <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation
}
