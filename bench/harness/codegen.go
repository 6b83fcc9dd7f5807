package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// codegenScaleRuns is the number of runs of each measurement at scale: a
// run over 10, 50 and 200 kinds takes about two and a half minutes.
const codegenScaleRuns = 3

// benchCodegen runs bench/codegen (opgen generate against controller-gen
// and code-generator) on the generator's fixture types and then on
// synthetic APIs of s.cfg.codegenKinds kinds, and keeps every run's
// seconds and peak RSS.
func (s *suite) benchCodegen(ctx context.Context) error {
	s.res.Codegen = map[string]float64{}
	out := filepath.Join(s.work, "codegen.json")
	if err := s.codegenRun(ctx, out, "-n", strconv.Itoa(s.cfg.codegenRuns), "-json", out); err != nil {
		return err
	}
	if s.cfg.codegenKinds == "" {
		return nil
	}
	logf("code generation at %s kinds (%d runs each; the conventional chain takes up to 35 s a run at 200 kinds)", s.cfg.codegenKinds, codegenScaleRuns)
	scale := filepath.Join(s.work, "codegen-scale.json")
	return s.codegenRun(ctx, scale+".scale.json", "-n", strconv.Itoa(codegenScaleRuns), "-kinds", s.cfg.codegenKinds, "-json", scale)
}

// codegenRun runs bench/codegen with args and keeps the runs it wrote to
// out.
func (s *suite) codegenRun(ctx context.Context, out string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "./codegen"}, args...)...)
	cmd.Dir = s.moduleDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go run ./codegen %s: %w", strings.Join(args, " "), err)
	}
	raw, err := readRuns(out)
	if err != nil {
		return err
	}
	for k, v := range raw {
		s.res.Codegen[k] = median(v)
		s.res.Raw["codegen."+k] = v
	}
	return nil
}

// benchCodegenSides compares code generation at the two refs of a
// comparison: bench/codegen -sides builds opgen in each checkout and runs
// both on this checkout's fixture types, alternating run by run. Each
// run's seconds go to the side's metrics (codegen.opgen cold, ...).
func (s *suite) benchCodegenSides(ctx context.Context) error {
	out := filepath.Join(s.work, "codegen-sides.json")
	cmd := exec.CommandContext(ctx, "go", "run", "./codegen", "-sides", s.sideDirs[sideA]+","+s.sideDirs[sideB],
		"-n", strconv.Itoa(max(s.cfg.codegenRuns, s.cfg.rounds)), "-json", out)
	cmd.Dir = s.moduleDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go run ./codegen -sides: %w", err)
	}
	raw, err := readRuns(out)
	if err != nil {
		return err
	}
	for k, v := range raw {
		side, what, ok := strings.Cut(k, " ")
		if !ok || (side != sideA && side != sideB) {
			continue
		}
		for _, x := range v {
			s.res.add("codegen."+what, side, x)
		}
	}
	return nil
}

// readRuns reads the seconds bench/codegen wrote to path, by measurement.
func readRuns(path string) (map[string][]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string][]float64
	return raw, json.Unmarshal(data, &raw)
}
