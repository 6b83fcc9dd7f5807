package v1

import (
	"errors"

	conversion "k8s.io/apimachinery/pkg/conversion"

	v2 "github.com/opgen-sdk/opgen/cmd/opgen/testdata/errors/conversion-stub-left/apis/v2"
)

// Convert_v2_WidgetSpec_To_v1_WidgetSpec converts what opgen cannot.
func Convert_v2_WidgetSpec_To_v1_WidgetSpec(in *v2.WidgetSpec, out *WidgetSpec, s conversion.Scope) error {
	if err := autoConvert_v2_WidgetSpec_To_v1_WidgetSpec(in, out, s); err != nil {
		return err
	}
	return errors.New("conversion of field Color not written")
}
