// Package audit runs `opgen rbac audit`: a project's tests with the API
// server's audit log on, or audit logs given, then each operator's
// requests against its generated roles (package pkg/rbacaudit).
package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
)

// Options are opgen rbac audit's.
type Options struct {
	// Dir is the project directory, where `go test` runs and paths are
	// relative to. Default: the working directory.
	Dir string
	// Packages are the test packages to run. Default: ./...
	Packages []string
	// Run is go test's -run.
	Run string
	// Logs are audit logs to read instead of running the tests, with
	// Operator naming whose requests to audit.
	Logs     []string
	Operator rbacaudit.Options
	// FailOnMissing makes any missing request an error.
	FailOnMissing bool
	// Out receives the reports; TestOutput the output of go test.
	Out, TestOutput io.Writer
}

// Run audits as opts say, and prints a report per operator.
func Run(ctx context.Context, opts Options) error {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.TestOutput == nil {
		opts.TestOutput = os.Stderr
	}
	if len(opts.Logs) > 0 {
		if opts.Operator.Name == "" {
			return errors.New("--log needs --name: the operator whose ServiceAccount made the requests")
		}
		rep, err := rbacaudit.Audit(opts.Operator, opts.Logs...)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.Out, "%s (%s)\n", opts.Operator.Name, strings.Join(opts.Logs, ", "))
		_, _ = rep.WriteTo(opts.Out)
		return opts.verdict([]*rbacaudit.Report{rep}, nil)
	}
	dir, err := os.MkdirTemp("", "opgen-rbac-audit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	testErr := opts.test(ctx, dir)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	records, err := rbacaudit.ReadRecords(dir)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return fmt.Errorf("no test package ran an operator with the test kit (optest.New with Options.Name and Setup), so there is nothing to audit; go test: %v", testErr)
	}
	var reports []*rbacaudit.Report
	for _, group := range byOperator(records) {
		rep, err := opts.report(group)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	return opts.verdict(reports, testErr)
}

// test runs go test on the packages with the audit on, into dir.
func (opts Options) test(ctx context.Context, dir string) error {
	args := []string{"test", "-count=1"}
	if opts.Run != "" {
		args = append(args, "-run", opts.Run)
	}
	pkgs := opts.Packages
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), rbacaudit.EnvAudit+"="+dir)
	cmd.Stdout, cmd.Stderr = opts.TestOutput, opts.TestOutput
	fmt.Fprintf(opts.TestOutput, "opgen rbac audit: go %s, with the API server's audit log on\n", strings.Join(cmd.Args[1:], " "))
	return cmd.Run()
}

// byOperator groups records by the operator they audited, in order.
func byOperator(records []rbacaudit.Record) [][]rbacaudit.Record {
	var out [][]rbacaudit.Record
	for _, r := range records {
		i := slices.IndexFunc(out, func(g []rbacaudit.Record) bool { return g[0].Operator == r.Operator })
		if i < 0 {
			out = append(out, nil)
			i = len(out) - 1
		}
		out[i] = append(out[i], r)
	}
	return out
}

// report audits the operator of a group of records and prints it.
func (opts Options) report(group []rbacaudit.Record) (*rbacaudit.Report, error) {
	op := group[0].Operator
	var logs, pkgs []string
	for _, r := range group {
		logs = append(logs, r.Log)
		pkgs = append(pkgs, opts.rel(r.Package))
	}
	rep, err := rbacaudit.Audit(op, logs...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Out, "%s: the roles of %s, against the tests of %s\n", op.Name, opts.rel(filepath.Join(op.ConfigDir, "rbac")), strings.Join(pkgs, ", "))
	_, _ = rep.WriteTo(opts.Out)
	return rep, nil
}

// rel is path relative to the project directory, when inside it.
func (opts Options) rel(path string) string {
	base, err := filepath.Abs(opts.Dir)
	if err != nil {
		return path
	}
	if r, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// verdict is the error of the run: tests that failed, or with
// FailOnMissing, requests missing.
func (opts Options) verdict(reports []*rbacaudit.Report, testErr error) error {
	missing := 0
	for _, r := range reports {
		missing += len(r.Missing)
	}
	var errs []error
	if opts.FailOnMissing && missing > 0 {
		errs = append(errs, fmt.Errorf("%d requests of the operator would be forbidden by its generated roles: grant each with a +kubebuilder:rbac marker (or the controller marker that derives it), run go generate ./... and audit again", missing))
	}
	if testErr != nil {
		errs = append(errs, fmt.Errorf("go test failed (%w): the audit covers the tests that ran", testErr))
	}
	return errors.Join(errs...)
}
