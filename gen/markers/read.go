package markers

import "slices"

// The markers below configure no controller: a generator reads them from
// the comments itself.

// ConversionDrop is the field marker
//
//	// +opgen:conversion:drop
//
// which says that converting the field's type to another version loses
// the field on purpose: the generated conversion needs no hand-written
// function for it, and the round-trip test leaves it out (gen/conversion).
const ConversionDrop = "opgen:conversion:drop"

// CompatAllow is the marker
//
//	// +opgen:compat:allow=<rule> reason="<why>"
//
// which acknowledges, on purpose, one finding of opgen generate's
// compatibility gate: a change to the API that breaks objects of the last
// release (gen/compat; opgen help upgrading). It goes on the Go field the
// finding names; for a field that no longer exists, on the type that held
// it, with field=<json name>; for a version that no longer exists or a
// changed scope, on the kind's type, with version=<name> for a version.
const CompatAllow = "opgen:compat:allow"

// readByGenerator are the markers a generator reads itself.
var readByGenerator = []string{ConversionDrop, CompatAllow}

// ReadByGenerator reports whether name is a marker that a generator reads
// from the comments itself (+opgen:conversion:drop, +opgen:compat:allow):
// it configures no controller, and may be on fields and any type.
func ReadByGenerator(name string) bool {
	return slices.Contains(readByGenerator, name)
}

// GeneratorMarkerHelp is the help of the markers a generator reads
// itself, as opgen help markers prints it after the controllers' markers.
var GeneratorMarkerHelp = []struct{ Usage, Details string }{
	{"+" + ConversionDrop, `On a field: converting its type to another version loses the field on
purpose. The generated conversion needs no hand-written function for it,
and the generated round-trip test leaves it out.`},
	{"+" + CompatAllow + `=<rule> reason="<why>"`, `Acknowledges, on purpose, one finding of the compatibility gate: a change
that breaks objects of the last release (opgen help upgrading). It goes on
the Go field the finding names; for a field that no longer exists, on the
type that held it, with field=<json name>; for a version that no longer
exists or a changed scope, on the kind's type, with version=<name> for a
version.`},
}
