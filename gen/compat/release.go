package compat

import (
	"bytes"
	"context"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen/diag"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/crd"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

// ReleaseHeader is the first line of every file opgen release writes. It
// is not opgen's generated-code line: no generator owns or removes these
// files.
const ReleaseHeader = "# The CRD of the last release, written by opgen release: opgen generate fails on changes that break its objects (go tool opgen help upgrading). Do not edit; run opgen release at the next release."

// ReleaseResult is what Release did.
type ReleaseResult struct {
	// Changes are the files of ReleasedDir written or removed.
	Changes []gen.Change
	// Done are the +opgen:compat:allow markers that acknowledged changes
	// the release now holds: they acknowledge nothing from now on.
	Done []token.Position
	// Warnings are the run's warnings.
	Warnings []*diag.Error
}

// Release records the CRDs that the project's types generate now in
// ReleasedDir, as the baseline of the compatibility gate of later runs,
// and removes the released CRDs of kinds the project no longer has. It
// generates the CRDs in memory, through the gate against the last
// release: a release that breaks it without acknowledgement fails, with
// the errors of opgen generate, and writes nothing.
func Release(ctx context.Context, opts gen.Options) (*ReleaseResult, error) {
	p, err := PrepareRelease(ctx, opts)
	if err != nil {
		return nil, err
	}
	return p.Write()
}

// PreparedRelease is a release generated and gated, not yet written.
type PreparedRelease struct {
	// Files are the released manifests, by base name.
	Files map[string][]byte
	dir   string
	res   *ReleaseResult
}

// PrepareRelease does what Release does but write: so that a caller can
// check the CRDs (opgen release --live) before they are recorded.
func PrepareRelease(ctx context.Context, opts gen.Options) (*PreparedRelease, error) {
	opts.DryRun = true
	gate := &Generator{}
	res, err := gen.Run(ctx, opts, map[string]gen.Generator{"crd": crd.Generator{}, "compat": gate})
	if err != nil {
		return nil, err
	}
	p, err := gen.NewProject(opts)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	crdDir := p.Abs(p.CRDDir)
	for path, data := range res.Output.Files() {
		if filepath.Dir(path) == crdDir && strings.HasSuffix(path, ".yaml") {
			files[filepath.Base(path)] = released(data)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRD to release: the packages %s declare no kind", strings.Join(p.Patterns, " "))
	}
	return &PreparedRelease{
		Files: files, dir: p.Abs(p.ReleasedDir),
		res: &ReleaseResult{Done: gate.Acknowledged, Warnings: res.Warnings},
	}, nil
}

// Result is what the release did, or would do: its Changes are empty
// until Write.
func (p *PreparedRelease) Result() *ReleaseResult { return p.res }

// Write records the release in ReleasedDir.
func (p *PreparedRelease) Write() (*ReleaseResult, error) {
	var err error
	if p.res.Changes, err = writeReleased(p.dir, p.Files); err != nil {
		return nil, err
	}
	return p.res, nil
}

// released turns a generated CRD manifest into a released one: its
// generated-code line becomes ReleaseHeader.
func released(data []byte) []byte {
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	if !bytes.Contains(line, []byte(gen.Header)) {
		rest = data
	}
	return append([]byte(ReleaseHeader+"\n"), rest...)
}

// writeReleased writes files (by base name) into dir when they differ, and
// removes the other released files there.
func writeReleased(dir string, files map[string][]byte) ([]gen.Change, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var changes []gen.Change
	for _, name := range names {
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := osenv.WriteFileAtomic(path, files[name], 0o644); err != nil {
			return changes, err
		}
		changes = append(changes, gen.Change{Path: path, Op: "write"})
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	sort.Strings(stale)
	for _, path := range stale {
		if _, keep := files[filepath.Base(path)]; keep || !isReleased(path) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return changes, err
		}
		changes = append(changes, gen.Change{Path: path, Op: "remove"})
	}
	return changes, nil
}

func isReleased(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(data, []byte(ReleaseHeader))
}
