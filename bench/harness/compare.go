package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// comparable are the benchmarks a comparison (-compare) can run: those
// that start the operator binary, and code generation (opgen built at each
// ref, on the same fixture types). The webhook benchmark serves opgen
// linked into this harness and the sharding benchmark compares opgen with
// itself at replica counts; neither builds at another commit.
var comparable = []string{"raw", "coldstart", "owned", "userchange", "throughput", "overhead", "latency", "steady", "failover", "codegen"}

// compareConfig reads -compare A,B: the refs of sides A and B ("" or "."
// is the working tree, B's default). It returns the benchmarks to run:
// only, which must all be comparable, or every comparable one.
func compareConfig(spec string, only map[string]bool) ([]string, map[string]bool, error) {
	refs := strings.Split(spec, ",")
	if len(refs) > 2 {
		return nil, nil, fmt.Errorf("-compare %s: want A,B (two git refs; B empty for the working tree)", spec)
	}
	if len(refs) == 1 {
		refs = append(refs, "")
	}
	for i, r := range refs {
		refs[i] = strings.TrimSpace(r)
		if refs[i] == "." {
			refs[i] = ""
		}
	}
	if refs[0] == "" {
		return nil, nil, fmt.Errorf("-compare %s: A must be a git ref (a tag, a branch or a commit)", spec)
	}
	if only == nil {
		only = map[string]bool{}
		for _, b := range comparable {
			only[b] = true
		}
		return refs, only, nil
	}
	var not []string
	for b := range only {
		if !slices.Contains(comparable, b) {
			not = append(not, b)
		}
	}
	if len(not) > 0 {
		slices.Sort(not)
		return nil, nil, fmt.Errorf("-compare runs only %s; not %s (they do not build opgen at each ref)",
			strings.Join(comparable, ","), strings.Join(not, ","))
	}
	return refs, only, nil
}

// side is one commit of a comparison.
type side struct {
	// Ref is as given; "" is the working tree.
	Ref     string `json:"ref"`
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	// Dirty is a working tree with uncommitted changes to tracked files.
	Dirty bool `json:"dirty,omitempty"`
}

func (sd side) short() string {
	if len(sd.Commit) > 7 {
		return sd.Commit[:7]
	}
	return sd.Commit
}

// label names the side in a report: the ref and its commit.
func (sd side) label() string {
	switch {
	case sd.Ref == "" && sd.Dirty:
		return fmt.Sprintf("the working tree (%s + uncommitted changes)", sd.short())
	case sd.Ref == "":
		return fmt.Sprintf("the working tree (%s)", sd.short())
	case strings.HasPrefix(sd.Commit, sd.Ref):
		return sd.short()
	default:
		return fmt.Sprintf("%s (%s)", sd.Ref, sd.short())
	}
}

// worktree is a checkout of a ref for a comparison's build.
type worktree struct {
	root string // the repository it was added from
	tmp  string // the temporary directory holding it
	dir  string
}

// buildSides builds the opgen operator under test at both refs: each ref
// is checked out with git worktree into a temporary directory and built
// there, so that its bench module builds against the root module of the
// same commit. The checkouts are removed once built, on failure too.
func (s *suite) buildSides(ctx context.Context) error {
	root := filepath.Dir(s.moduleDir)
	s.bins = map[string]string{}
	s.res.Sides = map[string]side{}
	s.sideDirs = map[string]string{}
	if !s.cfg.runs("codegen") { // else kept for it, and removed by cleanup
		defer s.removeWorktrees()
	}
	for i, name := range []string{sideA, sideB} {
		sd, dir, err := s.checkout(ctx, root, name, s.cfg.compare[i])
		if err != nil {
			return fmt.Errorf("side %s: %w", name, err)
		}
		bin := filepath.Join(s.work, "bin", name)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./operator/opgen")
		cmd.Dir = filepath.Join(dir, "bench")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("side %s, %s: go build ./operator/opgen: %v\n%s", name, sd.label(), err, out)
		}
		s.bins[name] = bin
		s.sideDirs[name] = dir
		s.res.Sides[name] = sd
		logf("   %s: %s, %q", name, sd.label(), sd.Subject)
	}
	s.res.CompareNotes = append(s.res.CompareNotes, s.instrumentationNote(ctx, root))
	return nil
}

// checkout returns side name at ref and the directory of its checkout:
// the repository itself for the working tree, else a new git worktree.
func (s *suite) checkout(ctx context.Context, root, name, ref string) (side, string, error) {
	rev := ref
	if ref == "" {
		rev = "HEAD"
	}
	commit, err := git(ctx, root, "rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return side{}, "", err
	}
	subject, err := git(ctx, root, "log", "-1", "--format=%s", commit)
	if err != nil {
		return side{}, "", err
	}
	sd := side{Ref: ref, Commit: commit, Subject: subject}
	if ref == "" {
		status, err := git(ctx, root, "status", "--porcelain", "--untracked-files=no")
		if err != nil {
			return side{}, "", err
		}
		sd.Dirty = status != ""
		return sd, root, nil
	}
	tmp, err := os.MkdirTemp("", "opgen-bench-"+strings.ToLower(name)+"-")
	if err != nil {
		return side{}, "", err
	}
	wt := worktree{root: root, tmp: tmp, dir: filepath.Join(tmp, "src")}
	s.worktrees = append(s.worktrees, wt)
	if _, err := git(ctx, root, "worktree", "add", "--detach", wt.dir, commit); err != nil {
		return side{}, "", err
	}
	return sd, wt.dir, nil
}

// removeWorktrees removes the checkouts of the comparison and their
// registration in the repository.
func (s *suite) removeWorktrees() {
	for _, wt := range s.worktrees {
		if _, err := git(context.Background(), wt.root, "worktree", "remove", "--force", wt.dir); err != nil {
			logf("   git worktree remove %s: %v; removing the directory and pruning", wt.dir, err)
			_ = os.RemoveAll(wt.dir)
			_, _ = git(context.Background(), wt.root, "worktree", "prune")
		}
		_ = os.RemoveAll(wt.tmp)
	}
	s.worktrees = nil
}

// instrumentationNote says whether the probe and the operator's main, the
// code that measures inside the operator, differ between the sides: if
// they do, part of a difference may be theirs.
func (s *suite) instrumentationNote(ctx context.Context, root string) string {
	paths := []string{"bench/internal/probe", "bench/operator/opgen", "bench/internal/controller"}
	args := []string{"diff", "--stat", s.res.Sides[sideA].Commit}
	if b := s.res.Sides[sideB]; b.Ref != "" {
		args = append(args, b.Commit)
	}
	out, err := git(ctx, root, append(append(args, "--"), paths...)...)
	switch {
	case err != nil:
		return "Whether the operator's instrumentation differs between the sides is unknown: " + err.Error()
	case out == "":
		return fmt.Sprintf("The operator's instrumentation and handler (%s) are the same at both sides.", strings.Join(paths, ", "))
	default:
		return fmt.Sprintf("The operator's instrumentation or handler differs between the sides, so part of a difference may be theirs:\n\n```\n%s\n```", out)
	}
}

// git runs git in dir and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out)), nil
}
