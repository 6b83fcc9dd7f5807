package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	v1 "example.com/conformance/stalespoke/api/v1"
)

// Convert_v1_BoardSpec_To_v1beta1_BoardSpec drops Color, which v1beta1
// does not have: a v1beta1 client never sees it.
func Convert_v1_BoardSpec_To_v1beta1_BoardSpec(in *v1.BoardSpec, out *BoardSpec, s conversion.Scope) error {
	return autoConvert_v1_BoardSpec_To_v1beta1_BoardSpec(in, out, s)
}
