//go:build !unix

package cli

import (
	"errors"
	"io"
	"os"
	"os/exec"
)

// execDev runs bin until it exits, with its exit code.
func execDev(bin string, args []string, stdout, stderr io.Writer) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	return err
}
