// This file is yours: opgen wrote it once, with a stub of each conversion
// it cannot generate, and never overwrites it. Generation fails while a
// function still returns its stub's error ("conversion of field ... not written").

package v1alpha1

import (
	"maps"

	v1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	conversion "k8s.io/apimachinery/pkg/conversion"
)

// StateAnnotation keeps a v1 state that v1alpha1's boolean cannot say
// (InProgress), so that a todo read in v1alpha1 and written back loses
// nothing.
const StateAnnotation = "todo.example.com/v1-state"

// Convert_v1alpha1_TodoSpec_To_v1_TodoSpec sets the v1 state from done: a
// done todo is Done, another Pending (Convert_v1alpha1_Todo_To_v1_Todo
// restores InProgress).
func Convert_v1alpha1_TodoSpec_To_v1_TodoSpec(in *TodoSpec, out *v1.TodoSpec, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_TodoSpec_To_v1_TodoSpec(in, out, s); err != nil {
		return err
	}
	out.State = v1.Pending
	if in.Done {
		out.State = v1.Done
	}
	return nil
}

// Convert_v1_TodoSpec_To_v1alpha1_TodoSpec sets done from the v1 state.
func Convert_v1_TodoSpec_To_v1alpha1_TodoSpec(in *v1.TodoSpec, out *TodoSpec, s conversion.Scope) error {
	if err := autoConvert_v1_TodoSpec_To_v1alpha1_TodoSpec(in, out, s); err != nil {
		return err
	}
	out.Done = in.State == v1.Done
	return nil
}

// Convert_v1_Todo_To_v1alpha1_Todo keeps a state other than Pending and
// Done in StateAnnotation.
func Convert_v1_Todo_To_v1alpha1_Todo(in *v1.Todo, out *Todo, s conversion.Scope) error {
	if err := autoConvert_v1_Todo_To_v1alpha1_Todo(in, out, s); err != nil {
		return err
	}
	if in.Spec.State != v1.Pending && in.Spec.State != v1.Done {
		out.Annotations = maps.Clone(out.Annotations) // shared with in
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[StateAnnotation] = string(in.Spec.State)
	}
	return nil
}

// Convert_v1alpha1_Todo_To_v1_Todo restores the state StateAnnotation kept
// for a todo that is not done, and drops the annotation.
func Convert_v1alpha1_Todo_To_v1_Todo(in *Todo, out *v1.Todo, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_Todo_To_v1_Todo(in, out, s); err != nil {
		return err
	}
	state, kept := in.Annotations[StateAnnotation]
	if !kept {
		return nil
	}
	out.Annotations = maps.Clone(out.Annotations) // shared with in
	delete(out.Annotations, StateAnnotation)
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	if !in.Spec.Done {
		out.Spec.State = v1.State(state)
	}
	return nil
}
