package testenv

import (
	"os"
	"path/filepath"
)

// auditPolicy logs every request of a service account at the Metadata
// level, once its response is complete (or, for a watch, started): what
// an operator's RBAC is checked against (pkg/rbacaudit). Other users'
// requests, the tests' own among them, are not logged.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: [system:serviceaccounts]
- level: None
`

// AuditLog is the path of the API server's audit log (Options.Audit), ""
// without one. Each line is an audit.k8s.io/v1 Event.
func (e *Environment) AuditLog() string {
	if !e.opts.Audit || e.Dir == "" {
		return ""
	}
	return filepath.Join(e.Dir, "audit.log")
}

// auditFlags write the audit policy and return the flags that log to
// AuditLog. The log backend's default mode blocks each request until its
// event is written, so the log is complete when a request returns.
func (e *Environment) auditFlags() ([]string, error) {
	policy := filepath.Join(e.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + e.AuditLog(),
		"--audit-log-format=json",
	}, nil
}
