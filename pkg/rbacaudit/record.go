package rbacaudit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// EnvAudit names the environment variable that asks every test kit
// (pkg/optest) that runs an operator to log its requests, and names the
// directory where each leaves its Record when it stops. `opgen rbac
// audit` sets it around `go test`.
const EnvAudit = "OPGEN_RBAC_AUDIT"

// Record is what one test package left in the EnvAudit directory: its
// operator, where its roles are, and the audit log of its run.
type Record struct {
	// Operator names the operator and its roles; ConfigDir is absolute.
	Operator Options `json:"operator"`
	// Package is the directory of the test package that ran it.
	Package string `json:"package"`
	// Log is the path of the audit log, beside the record.
	Log string `json:"log"`
}

// WriteRecord copies the audit log at log into dir, with the record of
// the operator opts that the package in pkg ran, under a name of this
// process's own.
func WriteRecord(dir string, opts Options, pkg, log string) error {
	base := filepath.Join(dir, opts.Name+"-"+strconv.Itoa(os.Getpid()))
	if err := copyFile(log, base+".log"); err != nil {
		return fmt.Errorf("rbacaudit: record the audit log in %s: %w", dir, err)
	}
	data, err := json.Marshal(Record{Operator: opts, Package: pkg, Log: base + ".log"})
	if err != nil {
		return err
	}
	return os.WriteFile(base+".json", data, 0o644)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ReadRecords reads the records left in dir, sorted by file name.
func ReadRecords(dir string) ([]Record, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("rbacaudit: %s is no audit record: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Audit reads the requests of opts' ServiceAccount from the audit logs at
// logs and compares them with its roles.
func Audit(opts Options, logs ...string) (*Report, error) {
	roles, err := ReadRoles(opts)
	if err != nil {
		return nil, err
	}
	var requests []Request
	for _, l := range logs {
		f, err := os.Open(l)
		if err != nil {
			return nil, err
		}
		rs, err := ReadLog(f, opts.User())
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l, err)
		}
		requests = append(requests, rs...)
	}
	return Compare(roles, requests), nil
}
