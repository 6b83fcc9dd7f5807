package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// dirUsage is the help of -C/--dir on every command that works in a
// project.
const dirUsage = "the project's root, where go.mod is: run as if started there (as go -C)"

// inProjectDir adds -C/--dir to cmd, whose RunE then runs in that
// directory, as go -C and git -C do: its relative paths (--out,
// --config-dir, packages) are relative to it. opgen generate, release,
// adopt and upgrade take the root as an option instead; their flag is
// the same. With create, a missing directory is made (opgen init -C).
func inProjectDir(cmd *cobra.Command, create bool) *cobra.Command {
	var dir string
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", dirUsage)
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := chdir(dir, create); err != nil {
			return err
		}
		return run(c, args)
	}
	return cmd
}

func chdir(dir string, create bool) error {
	if dir == "" || dir == "." {
		return nil
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("-C %s: %w", dir, err)
		}
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("-C %s: %w: pass the project's root, where go.mod is", dir, err)
	}
	return nil
}
