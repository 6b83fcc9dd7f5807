package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/compat"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/gen/scaffold"
	"github.com/opgen-sdk/opgen/internal/memlimit"
)

// gcPercent is the GOGC of a run under memlimit's soft limit.
var gcPercent = 300

// GenerateOptions are opgen generate's.
type GenerateOptions struct {
	gen.Options
	// Dir is the project root, relative to the working directory.
	Dir string
	// Only names the generators to run; all when empty.
	Only []string
	// Verbose lists every file written and the time of each stage
	// (Options.Timings prints the time and allocation of each).
	Verbose bool
	// Layout is the layout of the project: "opgen" (default) or
	// "kubebuilder", a project adopted from kubebuilder (see
	// generators.Kubebuilder and KubebuilderDefaults).
	Layout string
}

// KubebuilderCRDDir is where kubebuilder keeps the CRDs, which its
// kustomization and envtest suites read.
const KubebuilderCRDDir = "config/crd/bases"

// KubebuilderDefaults sets the directories of the kubebuilder layout on
// opts where they are unset: kubebuilder's config/ stays as it is. The
// project keeps serving its conversions with controller-runtime.
func KubebuilderDefaults(opts *gen.Options) {
	if opts.CRDDir == "" {
		opts.CRDDir = KubebuilderCRDDir
	}
	opts.ProjectServesConversions = true
}

// Generate runs the generators on the packages of patterns, with a soft
// memory limit (see internal/memlimit), and reports to w what a user needs
// to see: the scaffolds created, warnings, and with Verbose or Timings
// more. A failed run returns its errors, positioned relative to the root.
func Generate(ctx context.Context, opts GenerateOptions, patterns []string, w io.Writer) error {
	layout := opts.Layout
	if layout == "" {
		layout = "opgen"
	}
	selected, err := generators.PickLayout(layout, opts.Only)
	if err != nil {
		return err
	}
	if layout == "kubebuilder" {
		KubebuilderDefaults(&opts.Options)
	}
	if opts.Root, err = filepath.Abs(opts.Dir); err != nil {
		return err
	}
	opts.Patterns = patterns
	opts.Version = BuildVersion()
	start := time.Now()
	undo, limited := memlimit.Set(memlimit.Default)
	defer undo()
	if limited {
		// Under the soft limit, collect less often: a run allocates much
		// that dies at once, and the limit bounds the peak.
		defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	}
	res, err := gen.Run(ctx, opts.Options, selected)
	if runErr := (*gen.RunError)(nil); errors.As(err, &runErr) {
		return errors.New(runErr.Relative(opts.Root).Error())
	}
	if err != nil {
		return err
	}
	res.Report(w, opts.Root, opts.Verbose, time.Since(start))
	if !res.UpToDate {
		if err := refreshTests(opts.Options, w); err != nil {
			return err
		}
	}
	if gate, ok := selected["compat"].(*compat.Generator); ok && !res.UpToDate {
		if note := gate.Note(opts.ReleasedDir); note != "" {
			fmt.Fprintf(w, "opgen: %s\n", note)
		}
	}
	if opts.Timings {
		res.PrintTimings(w, time.Since(start))
	}
	return nil
}

// refreshTests keeps the kind tests create api wrote in step with the CRDs
// the run wrote (scaffold.RefreshTests), and says what it did on w.
func refreshTests(opts gen.Options, w io.Writer) error {
	orDefault := func(dir, def string) string {
		if dir == "" {
			return def
		}
		return dir
	}
	rewritten, warnings, err := scaffold.RefreshTests(opts.Root, orDefault(opts.ControllerDir, gen.DefaultControllerDir), orDefault(opts.CRDDir, gen.DefaultCRDDir))
	for _, f := range rewritten {
		fmt.Fprintf(w, "opgen: update %s (its client call follows the CRD's names)\n", f)
	}
	for _, warning := range warnings {
		fmt.Fprintf(w, "opgen: warning: %s\n", warning)
	}
	return err
}
