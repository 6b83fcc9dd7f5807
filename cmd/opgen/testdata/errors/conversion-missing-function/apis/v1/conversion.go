package v1

// The user's conversions live here; Convert_v2_WidgetSpec_To_v1_WidgetSpec
// is missing.
