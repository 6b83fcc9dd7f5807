// Package rbacaudit checks an operator's RBAC against what it did: it
// reads the requests the operator's ServiceAccount made from the API
// server's audit log, and the roles the operator's manifest binds to it,
// and reports the requests those roles would forbid (missing) and the
// rules no request used (unused), each with what asks for it.
//
// # Flow
//
// The roles come from the manifest `opgen manifests` builds
// (ReadRoles): the rules of config/rbac carry comments, written by
// opgen generate, that say which marker or derivation asks for each
// (WhyLine); the roles the manifest adds itself (metrics, webhooks) are
// counted as granted but not audited for use. The requests come from an
// audit log (ReadLog), such as the one pkg/testenv writes with
// Options.Audit and pkg/optest keeps with Options.Audit, or leaves in
// the EnvAudit directory as a Record. Compare puts the two together;
// Report.WriteTo prints it. `opgen rbac audit` runs a project's tests
// with EnvAudit set and prints a report per operator (docs/generate.md,
// "Checking the role against what the operator does").
//
// # Guarantees
//
//   - A request is missing when no rule of the roles, nor the rules the
//     API server grants every authenticated user (discovery, self
//     reviews), allows it, matched as the RBAC authorizer matches: group,
//     resource and subresource, name, namespace of a Role, verb.
//   - A rule is unused when no request of the log is allowed by it.
//
// # Caveats
//
// Unused means unused by what ran: a rule the runtime needs only on rare
// paths (a prune, a finalizer after a crash) stays unused until a test
// takes that path. Justify such a rule next to its marker rather than
// remove it.
package rbacaudit
