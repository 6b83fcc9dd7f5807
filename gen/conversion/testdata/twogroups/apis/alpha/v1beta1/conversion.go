package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	commonv1 "github.com/opgen-sdk/opgen/gen/conversion/testdata/twogroups/apis/common/v1"
	commonv1beta1 "github.com/opgen-sdk/opgen/gen/conversion/testdata/twogroups/apis/common/v1beta1"
)

// Convert_v1beta1_Note_To_v1_Note converts a shared note; the other group
// declares the same function for the same pair of types.
func Convert_v1beta1_Note_To_v1_Note(in *commonv1beta1.Note, out *commonv1.Note, _ conversion.Scope) error {
	out.Text = in.Body
	return nil
}

// Convert_v1_Note_To_v1beta1_Note converts it back.
func Convert_v1_Note_To_v1beta1_Note(in *commonv1.Note, out *commonv1beta1.Note, _ conversion.Scope) error {
	out.Body = in.Text
	return nil
}
