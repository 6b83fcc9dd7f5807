package v1beta1

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "example.com/conformance/hubspoke/api/v1"
)

// ConvertTo converts this Oven to the hub, v1.
func (src *Oven) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1.Oven)
	dst.ObjectMeta = src.ObjectMeta
	unit := strings.TrimLeft(src.Spec.Heat, "0123456789")
	degrees, err := strconv.Atoi(strings.TrimSuffix(src.Spec.Heat, unit))
	if err != nil && src.Spec.Heat != "" {
		return fmt.Errorf("heat %q: %w", src.Spec.Heat, err)
	}
	dst.Spec.Heat = v1.Heat{Degrees: int32(degrees), Unit: unit}
	dst.Spec.Fan = src.Spec.Fan
	dst.Status.Baking = src.Status.Baking
	return nil
}

// ConvertFrom converts the hub, v1, to this version.
func (dst *Oven) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1.Oven)
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Heat = strconv.Itoa(int(src.Spec.Heat.Degrees)) + src.Spec.Heat.Unit
	dst.Spec.Fan = src.Spec.Fan
	dst.Status.Baking = src.Status.Baking
	return nil
}
