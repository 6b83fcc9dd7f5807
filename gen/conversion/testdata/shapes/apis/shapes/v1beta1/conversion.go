package v1beta1

import (
	conversion "k8s.io/apimachinery/pkg/conversion"

	v1 "github.com/opgen-sdk/opgen/gen/conversion/testdata/shapes/apis/shapes/v1"
)

// Convert_v1beta1_ShapeSpec_To_v1_ShapeSpec drops the region.
func Convert_v1beta1_ShapeSpec_To_v1_ShapeSpec(in *ShapeSpec, out *v1.ShapeSpec, s conversion.Scope) error {
	return autoConvert_v1beta1_ShapeSpec_To_v1_ShapeSpec(in, out, s)
}

// Convert_v1_ShapeSpec_To_v1beta1_ShapeSpec drops the zone.
func Convert_v1_ShapeSpec_To_v1beta1_ShapeSpec(in *v1.ShapeSpec, out *ShapeSpec, s conversion.Scope) error {
	return autoConvert_v1_ShapeSpec_To_v1beta1_ShapeSpec(in, out, s)
}

// Convert_v1beta1_Limits_To_v1_Limits is written by hand.
// +k8s:conversion-fn=copy-only
func Convert_v1beta1_Limits_To_v1_Limits(in *Limits, out *v1.Limits, s conversion.Scope) error {
	return autoConvert_v1beta1_Limits_To_v1_Limits(in, out, s)
}
