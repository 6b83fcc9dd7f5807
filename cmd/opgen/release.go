package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/compat"
)

func newReleaseCommand() *cobra.Command {
	var (
		opts gen.Options
		dir  string
	)
	cmd := &cobra.Command{
		Use:   "release [packages]",
		Short: "Record the CRDs of this release, which later runs of opgen generate keep compatible",
		Long: `Generates the CRDs of the API types, in memory, and writes them into
config/released (--released-dir), the baseline of opgen generate's
compatibility gate: from then on, a change to the types that breaks the
objects of this release (a field removed, a type changed, a new required
field, a stricter validation, ...) fails generation, at the Go field,
until a marker acknowledges it:

  // +opgen:compat:allow=<rule> reason="<why>"

Run it when you ship, and commit config/released with the release. The
CRDs pass through the gate against the previous release first: a release
that breaks it without acknowledgement fails and writes nothing. The
markers that acknowledged its changes are done afterwards; release lists
them. See opgen help upgrading.`,
		Example: `  opgen release
  git add config/released && git commit -m "release v1.2.0"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Root, err = filepath.Abs(dir); err != nil {
				return err
			}
			opts.Patterns = args
			res, err := compat.Release(cmd.Context(), opts)
			if runErr := (*gen.RunError)(nil); errors.As(err, &runErr) {
				return errors.New(runErr.Relative(opts.Root).Error())
			}
			if err != nil {
				return err
			}
			reportRelease(cmd, opts, res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&dir, "dir", "C", ".", "project root: patterns and outputs are relative to it")
	f.StringVar(&opts.Name, "name", "", "name of the operator, as for opgen generate (it names the conversion webhook's Service in the CRDs)")
	f.StringVar(&opts.CRDDir, "crd-dir", gen.DefaultCRDDir, "directory of the CRD manifests, as for opgen generate")
	f.StringVar(&opts.ReleasedDir, "released-dir", gen.DefaultReleasedDir, "directory to record the released CRDs in")
	f.BoolVar(&opts.AllowDangerousTypes, "allow-dangerous-types", false, "allow float32 and float64 fields, as for opgen generate")
	return cmd
}

func reportRelease(cmd *cobra.Command, opts gen.Options, res *compat.ReleaseResult) {
	w := cmd.ErrOrStderr()
	for _, warn := range (&gen.RunError{Errors: res.Warnings}).Relative(opts.Root).Errors {
		fmt.Fprintf(w, "opgen: warning: %s\n", warn)
	}
	for _, c := range res.Changes {
		rel, _ := filepath.Rel(opts.Root, c.Path)
		fmt.Fprintf(w, "opgen: %s %s\n", c.Op, rel)
	}
	if len(res.Changes) == 0 {
		fmt.Fprintf(w, "opgen: %s already holds these CRDs\n", opts.ReleasedDir)
	}
	for _, pos := range res.Done {
		if rel, err := filepath.Rel(opts.Root, pos.Filename); err == nil {
			pos.Filename = rel
		}
		fmt.Fprintf(w, "opgen: %s: this release holds the change the marker acknowledged: remove the marker\n", pos)
	}
}
