// Package cli is what each opgen command does, behind the flags cmd/opgen
// parses: one function per command, which takes the command's options and
// its output, so that the command line is flags and one call.
package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// BuildVersion is the version of the opgen module the running binary was
// built from, "(devel)" for a build from a checkout.
func BuildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}

// writeOutput writes data to w when out is "-", else to the file out,
// atomically.
func writeOutput(w io.Writer, out string, data []byte) error {
	if out == "-" {
		_, err := w.Write(data)
		return err
	}
	if err := osenv.WriteFileAtomic(out, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
