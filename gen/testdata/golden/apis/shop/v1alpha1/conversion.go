package v1alpha1

import (
	conversion "k8s.io/apimachinery/pkg/conversion"

	v1 "github.com/opgen-sdk/opgen/gen/testdata/golden/apis/shop/v1"
)

// Convert_v1_OrderSpec_To_v1alpha1_OrderSpec drops the quantity: a
// v1alpha1 order has one of each item.
func Convert_v1_OrderSpec_To_v1alpha1_OrderSpec(in *v1.OrderSpec, out *OrderSpec, s conversion.Scope) error {
	return autoConvert_v1_OrderSpec_To_v1alpha1_OrderSpec(in, out, s)
}

// Convert_v1_Order_To_v1alpha1_Order drops the status, which v1alpha1
// does not serve.
func Convert_v1_Order_To_v1alpha1_Order(in *v1.Order, out *Order, s conversion.Scope) error {
	return autoConvert_v1_Order_To_v1alpha1_Order(in, out, s)
}
