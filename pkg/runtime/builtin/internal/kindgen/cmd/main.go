// Command kindgen writes zz_generated.kinds.go in the current directory
// (package builtin's, through its go:generate line).
package main

import (
	"fmt"
	"os"

	"github.com/opgen-sdk/opgen/pkg/runtime/builtin/internal/kindgen"
)

func main() {
	src, err := kindgen.Render()
	if err == nil {
		err = os.WriteFile("zz_generated.kinds.go", src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
