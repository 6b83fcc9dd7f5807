//go:build unix

package cli

import (
	"io"
	"os"
	"syscall"
)

// execDev replaces the running process with bin.
func execDev(bin string, args []string, _, _ io.Writer) error {
	return syscall.Exec(bin, append([]string{"opgen dev"}, args...), os.Environ())
}
