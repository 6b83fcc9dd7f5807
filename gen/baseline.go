package gen

import (
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// policyFile is the compatibility gate's policy in ReleasedDir
// (compat.PolicyFile; that package imports this one).
const policyFile = "compat.yaml"

// hashBaseline adds the compatibility gate's baseline (gen/compat) to h:
// the files of ReleasedDir, or the commit BaselineRef resolves to and the
// policy file, so that a new release, a ref that moved or a changed policy
// makes the next run a full one.
func (s *stamp) hashBaseline(h hash.Hash) error {
	p := s.project
	fmt.Fprintf(h, "baseline %q %q\n", p.ReleasedDir, p.BaselineRef)
	if p.BaselineRef != "" {
		out, err := exec.Command("git", "-C", p.Root, "rev-parse", "--verify", "--quiet", p.BaselineRef+"^{commit}").Output()
		if err != nil {
			out = []byte("unresolved")
		}
		fmt.Fprintf(h, "%s\n", strings.TrimSpace(string(out)))
		// The gate's policy is read from the working tree whatever the
		// baseline: a changed policy runs the gate again.
		err = s.hashFile(h, filepath.Join(p.Abs(p.ReleasedDir), policyFile))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	entries, err := os.ReadDir(p.Abs(p.ReleasedDir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, filepath.Join(p.Abs(p.ReleasedDir), e.Name()))
		}
	}
	sort.Strings(names)
	for _, path := range names {
		if err := s.hashFile(h, path); err != nil {
			return err
		}
	}
	return nil
}
