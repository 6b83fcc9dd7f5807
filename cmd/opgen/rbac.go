package main

import (
	"github.com/spf13/cobra"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/audit"
)

func newRBACCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Check the operator's generated RBAC against what it does",
	}
	cmd.AddCommand(newRBACAuditCommand())
	return cmd
}

func newRBACAuditCommand() *cobra.Command {
	var opts audit.Options
	cmd := &cobra.Command{
		Use:   "audit [packages]",
		Short: "Run the tests with the API server's audit log on and list the missing and unused rules of the generated roles",
		Long: `Runs go test on the packages (default ./...) with the API server's audit
log on: every test kit (pkg/optest) that runs an operator starts a local
control plane of its own that logs each request of the operator's
ServiceAccount. Then, for each operator, it compares the requests with the
roles its manifest binds to it (config/rbac, as opgen generate derives it
from the controllers' markers and the +kubebuilder:rbac markers) and lists

  missing  requests the roles would forbid, per verb and resource;
  unused   verbs the roles grant that no request used, with the marker or
           derivation that asks for each (the comments of role.yaml).

A rule unused because the tests never take a rare path (a prune, a
finalizer removed after a crash) is justified in a comment next to the
marker that asks for it; any other is privilege to remove.

With --log, it reads audit logs instead (kube-apiserver --audit-log-path
with --audit-log-format=json) for the
operator --name names.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Packages = args
			opts.Out, opts.TestOutput = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return audit.Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.FailOnMissing, "fail-on-missing", false, "exit non-zero when any request would be forbidden by the generated roles")
	f.StringVar(&opts.Run, "run", "", "run only the tests that match this regexp (go test -run)")
	f.StringArrayVar(&opts.Logs, "log", nil, "audit this audit log instead of running the tests (repeatable; needs --name)")
	f.StringVar(&opts.Operator.Name, "name", "", "with --log: the operator's name, as in its generated RBAC")
	f.StringVar(&opts.Operator.Namespace, "namespace", "", "with --log: the namespace of its ServiceAccount (default <name>-system)")
	f.StringVar(&opts.Operator.ServiceAccount, "service-account", "", "with --log: its ServiceAccount (default <name>)")
	f.StringVar(&opts.Operator.ConfigDir, "config", "config", "with --log: the config directory that holds rbac/")
	return inProjectDir(cmd, false)
}
