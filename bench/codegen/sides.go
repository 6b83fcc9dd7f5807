package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

var sides = flag.String("sides", "", "A,B: instead of the conventional tools, opgen built from two checkouts of the repository (their directories) on the same fixture types (this checkout's), alternating run by run: cold, warm and no-op, written to -json as \"A opgen cold\", \"B opgen cold\", ... (make bench-compare)")

// runSides measures opgen generate as built from two checkouts, A and B,
// on copies of this checkout's fixture types, so that only the generator
// differs: cold (a new GOCACHE each run), warm (--force) and the no-op.
// The sides alternate run by run, and their order flips every run, so
// that a noisy moment hits both.
func runSides(bin, work string, dirs []string) error {
	if len(dirs) != 2 {
		return fmt.Errorf("-sides %v: want two directories, A,B", dirs)
	}
	names := []string{"A", "B"}
	bins, projects := map[string]string{}, map[string]string{}
	for i, name := range names {
		b := filepath.Join(bin, name)
		build := exec.Command("go", "build", "-o", filepath.Join(b, "opgen"), "./cmd/opgen")
		build.Dir = dirs[i]
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("side %s: build opgen in %s: %v\n%s", name, dirs[i], err, out)
		}
		p := filepath.Join(work, "side-"+name)
		if err := newProjectOf(repoDir, dirs[i], p); err != nil {
			return fmt.Errorf("side %s: %w", name, err)
		}
		bins[name], projects[name] = b, p
	}
	all := map[string][]time.Duration{}
	measure := func(key string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		all[key] = append(all[key], time.Since(start))
		return nil
	}
	for i := 0; i < *runs; i++ {
		order := names
		if i%2 == 1 {
			order = []string{"B", "A"}
		}
		for _, name := range order {
			cache := filepath.Join(work, fmt.Sprintf("gocache-%s-%d", name, i))
			if err := measure(name+" opgen cold", func() error { return runOpgen(bins[name], projects[name], cache, true) }); err != nil {
				return err
			}
			_ = os.RemoveAll(cache)
			if err := measure(name+" opgen warm (--force)", func() error { return runOpgen(bins[name], projects[name], "", true) }); err != nil {
				return err
			}
			if err := measure(name+" opgen no-op (binary)", func() error { return runOpgen(bins[name], projects[name], "", false) }); err != nil {
				return err
			}
		}
	}
	if err := sidesNoopAtScale(bins, dirs, work, all); err != nil {
		return err
	}
	for key, times := range all {
		fmt.Fprintf(os.Stderr, "%-32s %v\n", key, times)
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, all)
	}
	return nil
}

// sidesNoopKinds is the size of the synthetic API on which the sides'
// no-ops are compared: the size of the target row.
const sidesNoopKinds = 200

// sidesNoopAtScale measures each side's no-op over sidesNoopKinds
// synthetic kinds, as a project sees it in its edit loop: one run
// generates, one more finds nothing changed (and may complete the stamp),
// then the measured no-ops alternate between the sides, the order flipped
// every run. Each side's project uses the opgen of its checkout (dirs).
func sidesNoopAtScale(bins map[string]string, dirs []string, work string, all map[string][]time.Duration) error {
	projects := map[string]string{}
	for i, name := range []string{"A", "B"} {
		p := filepath.Join(work, fmt.Sprintf("side-%s-%d-kinds", name, sidesNoopKinds))
		if err := writeScaleTypes(p, sidesNoopKinds); err != nil {
			return err
		}
		if err := newModuleOf(p, dirs[i]); err != nil {
			return err
		}
		if err := runOpgen(bins[name], p, "", true); err != nil {
			return fmt.Errorf("side %s, %d kinds: %w", name, sidesNoopKinds, err)
		}
		// A directory is recorded once its time is older than the
		// stamp's racy window (gen's racyDir, 100 ms).
		time.Sleep(200 * time.Millisecond)
		if err := runOpgen(bins[name], p, "", false); err != nil {
			return fmt.Errorf("side %s, %d kinds: %w", name, sidesNoopKinds, err)
		}
		projects[name] = p
	}
	for i := 0; i < *runs; i++ {
		order := []string{"A", "B"}
		if i%2 == 1 {
			order = []string{"B", "A"}
		}
		for _, name := range order {
			key := fmt.Sprintf("%s opgen no-op at %d kinds (binary)", name, sidesNoopKinds)
			start := time.Now()
			if err := runOpgen(bins[name], projects[name], "", false); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			all[key] = append(all[key], time.Since(start))
		}
	}
	return nil
}
