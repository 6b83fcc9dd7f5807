package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// benchCodegen runs bench/codegen (opgen generate against controller-gen
// and code-generator on the generator's fixture types) and keeps its
// medians.
func (s *suite) benchCodegen(ctx context.Context) error {
	out := filepath.Join(s.work, "codegen.json")
	cmd := exec.CommandContext(ctx, "go", "run", "./codegen", "-n", strconv.Itoa(s.cfg.codegenRuns), "-json", out)
	cmd.Dir = s.moduleDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go run ./codegen: %w", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	var raw map[string][]float64
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	s.res.Codegen = map[string]float64{}
	for k, v := range raw {
		s.res.Codegen[k] = median(v)
		s.res.Raw["codegen."+k] = v
	}
	return nil
}
