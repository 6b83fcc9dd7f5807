package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/cli"
	"github.com/opgen-sdk/opgen/gen/compat"
)

func newReleaseCommand() *cobra.Command {
	var (
		opts         gen.Options
		dir          string
		live, dryRun bool
		cluster      cli.LiveOptions
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
them. See opgen help upgrading.

--live checks the objects of the current cluster (read only) first: it
reports each object that the new CRDs refuse an update of (a label, a
finalizer's removal), which the API server's validation ratcheting does
not keep writable, and fails, writing nothing, when there is one. The
judge is a scratch API server of opgen's local control plane (built on
first use). --dry-run writes nothing.`,
		Example: `  opgen release
  opgen release --live --context production --dry-run
  git add config/released && git commit -m "release v1.2.0"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Root, err = filepath.Abs(dir); err != nil {
				return err
			}
			opts.Patterns = args
			prepared, err := compat.PrepareRelease(cmd.Context(), opts)
			if runErr := (*gen.RunError)(nil); errors.As(err, &runErr) {
				return errors.New(runErr.Relative(opts.Root).Error())
			}
			if err != nil {
				return err
			}
			if live {
				if err := preflight(cmd, prepared, cluster); err != nil {
					return err
				}
			}
			res := prepared.Result()
			if !dryRun {
				if res, err = prepared.Write(); err != nil {
					return err
				}
			}
			reportRelease(cmd, opts, res, dryRun)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&dir, "dir", "C", ".", "project root: patterns and outputs are relative to it")
	f.StringVar(&opts.Name, "name", "", "name of the operator, as for opgen generate (it names the conversion webhook's Service in the CRDs)")
	f.StringVar(&opts.CRDDir, "crd-dir", gen.DefaultCRDDir, "directory of the CRD manifests, as for opgen generate")
	f.StringVar(&opts.ReleasedDir, "released-dir", gen.DefaultReleasedDir, "directory to record the released CRDs in")
	f.BoolVar(&opts.AllowDangerousTypes, "allow-dangerous-types", false, "allow float32 and float64 fields, as for opgen generate")
	f.BoolVar(&live, "live", false, "check the objects of the current cluster against the new CRDs first, and fail when it holds objects they refuse")
	f.StringVar(&cluster.Kubeconfig, "kubeconfig", "", "with --live: the kubeconfig of the cluster (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&cluster.Context, "context", "", "with --live: the kubeconfig's context (default: its current context)")
	f.BoolVar(&dryRun, "dry-run", false, "check, and write nothing")
	return cmd
}

// preflight runs the live check of the release's CRDs.
func preflight(cmd *cobra.Command, prepared *compat.PreparedRelease, cluster cli.LiveOptions) error {
	refused, err := cli.Preflight(cmd.Context(), prepared.Files, cluster, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err != nil {
		return fmt.Errorf("--live: %w", err)
	}
	if refused {
		return errors.New("--live: the cluster holds objects that the new CRDs refuse, listed above: change them (or the types) first; nothing was written")
	}
	return nil
}

func reportRelease(cmd *cobra.Command, opts gen.Options, res *compat.ReleaseResult, dryRun bool) {
	w := cmd.ErrOrStderr()
	for _, warn := range (&gen.RunError{Errors: res.Warnings}).Relative(opts.Root).Errors {
		fmt.Fprintf(w, "opgen: warning: %s\n", warn)
	}
	for _, c := range res.Changes {
		rel, _ := filepath.Rel(opts.Root, c.Path)
		fmt.Fprintf(w, "opgen: %s %s\n", c.Op, rel)
	}
	switch {
	case dryRun:
		fmt.Fprintf(w, "opgen: --dry-run: %s left as it is\n", opts.ReleasedDir)
	case len(res.Changes) == 0:
		fmt.Fprintf(w, "opgen: %s already holds these CRDs\n", opts.ReleasedDir)
	}
	for _, pos := range res.Done {
		if dryRun {
			break
		}
		if rel, err := filepath.Rel(opts.Root, pos.Filename); err == nil {
			pos.Filename = rel
		}
		fmt.Fprintf(w, "opgen: %s: this release holds the change the marker acknowledged: remove the marker\n", pos)
	}
}
