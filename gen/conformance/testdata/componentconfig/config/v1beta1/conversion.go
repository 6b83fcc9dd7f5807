package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	v1 "example.com/conformance/componentconfig/config/v1"
)

// Convert_v1beta1_Configuration_To_v1_Configuration converts Threads,
// which v1 calls Workers.
func Convert_v1beta1_Configuration_To_v1_Configuration(in *Configuration, out *v1.Configuration, s conversion.Scope) error {
	if err := autoConvert_v1beta1_Configuration_To_v1_Configuration(in, out, s); err != nil {
		return err
	}
	out.Workers = in.Threads
	return nil
}

// Convert_v1_Configuration_To_v1beta1_Configuration converts Workers,
// which v1beta1 calls Threads.
func Convert_v1_Configuration_To_v1beta1_Configuration(in *v1.Configuration, out *Configuration, s conversion.Scope) error {
	if err := autoConvert_v1_Configuration_To_v1beta1_Configuration(in, out, s); err != nil {
		return err
	}
	out.Threads = in.Workers
	return nil
}
