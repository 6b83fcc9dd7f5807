package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	v1 "example.com/conformance/codegenerator/apis/shop/v1"
)

// Convert_v1beta1_Endpoint_To_v1_Target converts a backend: the type has
// another name in v1, so conversion-gen leaves it to be written by hand.
func Convert_v1beta1_Endpoint_To_v1_Target(in *Endpoint, out *v1.Target, s conversion.Scope) error {
	out.Host, out.Port = in.Host, in.Port
	return nil
}

// Convert_v1_Target_To_v1beta1_Endpoint converts a backend back.
func Convert_v1_Target_To_v1beta1_Endpoint(in *v1.Target, out *Endpoint, s conversion.Scope) error {
	out.Host, out.Port = in.Host, in.Port
	return nil
}

// Convert_v1_ShopSpec_To_v1beta1_ShopSpec drops Till, which v1beta1 has
// not, keeping it in an annotation would be the next step.
func Convert_v1_ShopSpec_To_v1beta1_ShopSpec(in *v1.ShopSpec, out *ShopSpec, s conversion.Scope) error {
	return autoConvert_v1_ShopSpec_To_v1beta1_ShopSpec(in, out, s)
}
