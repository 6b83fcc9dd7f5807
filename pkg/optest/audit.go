package optest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
)

// Audit compares the requests the operator's ServiceAccount made so far,
// from the API server's audit log, with the roles the manifest binds to
// it: the requests they would forbid and the rules no request used
// (package rbacaudit). It needs Options.Audit.
func (k *Kit) Audit() (*rbacaudit.Report, error) {
	log, err := k.auditLog()
	if err != nil {
		return nil, err
	}
	return rbacaudit.Audit(k.auditOptions(), log)
}

func (k *Kit) auditLog() (string, error) {
	switch {
	case !k.opts.Audit || k.opts.Name == "":
		return "", errors.New("optest: no audit log: set Options.Name and Options.Audit")
	case k.Env == nil:
		return "", fmt.Errorf("optest: no audit log on an existing cluster (%s): audit the operator on the local control plane", ExistingClusterEnv)
	}
	return k.Env.AuditLog(), nil
}

func (k *Kit) auditOptions() rbacaudit.Options {
	dir, err := filepath.Abs(k.opts.ConfigDir)
	if err != nil {
		dir = k.opts.ConfigDir
	}
	return rbacaudit.Options{Name: k.opts.Name, Namespace: k.opts.Namespace, ConfigDir: dir}
}

// recordAudit leaves the kit's audit record in the rbacaudit.EnvAudit
// directory, before Stop removes the control plane's directory.
func (k *Kit) recordAudit() error {
	dir := os.Getenv(rbacaudit.EnvAudit)
	if dir == "" || k.Env == nil || !k.opts.Audit || k.opts.Name == "" {
		return nil
	}
	log, err := k.auditLog()
	if err != nil {
		return err
	}
	pkg, _ := os.Getwd()
	return rbacaudit.WriteRecord(dir, k.auditOptions(), pkg, log)
}
