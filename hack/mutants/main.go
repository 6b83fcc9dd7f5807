// Command mutants checks that the fault tests can fail for the reason
// their names give. Each mutant undoes one fix or breaks one promise (a
// replacement in one file), runs the test that protects it, and expects the
// test to fail; the file is restored whatever happens, an interrupt
// included. A mutant that the test survives, or that does not compile, is
// an error. docs/reliability.md lists them with how each test fails.
//
//	make mutants                      # all of them, about 10 minutes
//	go run ./hack/mutants -run status # those whose name matches
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"time"
)

// mutant is one way to break what a test protects.
type mutant struct {
	name string // what it breaks
	pkg  string // the package of the test
	test string // the -run regexp of the test
	file string // the file it changes
	old  string // text of file, replaced wherever it stands
	new  string
	env  []string // for the test
}

var mutants = []mutant{
	{
		name: "status-memo-ignores-version", pkg: "./pkg/runtime/", test: "^TestForeignStatusEditIsReverted$",
		file: "pkg/plug/status.go", old: "if ok && seen == m.seen && bytes.Equal(desired, m.written) {", new: "if ok && bytes.Equal(desired, m.written) {",
	},
	{
		name: "local-run-removes-live-webhooks", pkg: "./pkg/webhook/", test: "^TestLocalRunsKeepEachOthersWebhooks$",
		file: "pkg/webhook/stale.go", old: "if cc.URL != nil && answers(*cc.URL) {", new: "if false && cc.URL != nil && answers(*cc.URL) {",
	},
	{
		name: "webhooks-not-registered-again", pkg: "./pkg/webhook/", test: "^TestLocalRunsKeepEachOthersWebhooks$",
		file: "pkg/webhook/local.go", old: "|| s.drifted(ctx, base, applied):", new: ":",
	},
	{
		name: "readiness-check-backs-off", pkg: "./pkg/webhook/", test: "^TestReadyAtOnceAfterAnOutage$",
		file: "pkg/webhook/stale.go", old: "if !s.checks.done() {", new: "if false && !s.checks.done() {",
	},
	{
		name: "ready-before-relist", pkg: "./test/chaos/compaction/", test: "^TestCompactionUnderPartition$",
		file: "pkg/runtime/server.go", old: "if err := o.relists.Waiting(); err != nil {", new: "if err := o.relists.Waiting(); false && err != nil {",
	},
	{
		name: "outage-logged-per-operator", pkg: "./pkg/runtime/internal/outage/", test: "^TestOutageIsLoggedOncePerWatch$",
		file: "pkg/runtime/internal/outage/outage.go", old: "w.logged[path]", new: `w.logged[""]`,
	},
	{
		name: "client-timeout-ends-the-wait", pkg: "./pkg/runtime/internal/transport/", test: "^TestClientTimeoutBoundsRequestsOnly$",
		file: "pkg/runtime/internal/transport/transport.go", old: "\tout.Timeout = 0\n", new: "\n",
	},
	{
		name: "fleet-children-left-behind", pkg: "./pkg/runtime/fleet/", test: "^TestChildrenAcrossClusters$",
		file: "pkg/runtime/fleet/owned.go", old: "\treturn errors.Join(c.prune(ctx, owner, nil)...)", new: "\treturn nil",
	},
	{
		name: "fleet-selector-ignored", pkg: "./pkg/runtime/fleet/", test: "^TestChildrenAcrossClusters$",
		file: "pkg/runtime/fleet/select.go", old: "if !sel(op.Options().Cluster, isHome(op)) {", new: "if false {",
	},
	{
		name: "fleet-main-exits-on-lost-lease", pkg: "./pkg/runtime/fleet/", test: "^TestMainRunsAgainAfterALostLease$",
		file: "pkg/runtime/fleet/main.go", old: "if !runtimehooks.Of[*runtime.Operator]().RunAgain(ctx, f.Home(), err) {", new: "if true || !runtimehooks.Of[*runtime.Operator]().RunAgain(ctx, f.Home(), err) {",
	},
	{
		name: "migration-skips-an-object", pkg: "./pkg/runtime/internal/migration/", test: "^TestMigrateByRewrite$",
		file: "pkg/runtime/internal/migration/migration.go", old: "\t\t\t_, err := res.Namespace(obj.GetNamespace()).Update(",
		new: "\t\t\tif i == 0 {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\t_, err := res.Namespace(obj.GetNamespace()).Update(",
	},
	{
		name: "action-prune-policy-ignored", pkg: "./pkg/runtime/", test: "^TestChildrenAccumulate$",
		file: "pkg/plug/owned.go", old: "if p, ok := a.prune[gvk]; ok {", new: "if p, ok := a.prune[gvk]; ok && false {",
	},
	{
		name: "delete-without-uid-precondition", pkg: "./pkg/runtime/", test: "^TestDeleteNowKeepsANewObjectOfTheSameName$",
		file: "pkg/runtime/owned.go", old: "\t\tPreconditions:     &metav1.Preconditions{UID: &uid},\n", new: "",
	},
	{
		name: "crd-max-desc-len-not-wired", pkg: "./cmd/opgen/", test: "^TestCRDMaxDescLen$",
		file: "cmd/opgen/generate.go", old: "opts.CRDMaxDescLen = &descLen", new: "_ = descLen",
	},
	{
		name: "new-leader-leaves-shards-lease", pkg: "./pkg/runtime/", test: "^TestShardingHandsOverWithoutOverlap$",
		file: "pkg/runtime/internal/shard/sharder.go", old: "if h := l.Spec.HolderIdentity; h == nil || *h != s.env.Identity {",
		new: "if h := l.Spec.HolderIdentity; false && (h == nil || *h != s.env.Identity) {",
	},
	{
		name: "archive-writes-race", pkg: "./test/chaos/", test: "^TestChurnArchivesEveryDelete$",
		file: "examples/todo-operator/internal/controller/todo.go", old: "\tmu.(*sync.Mutex).Lock()\n\tdefer mu.(*sync.Mutex).Unlock()\n", new: "\t_ = mu\n",
	},
	{
		name: "finalizer-not-first", pkg: "./pkg/runtime/", test: "^TestFinalizerFirst$",
		file: "pkg/runtime/internal/lanes/lanes.go", old: "case q.Urgent(key):", new: "case false && q.Urgent(key):",
	},
	{
		name: "retry-leaves-the-user-lane", pkg: "./pkg/runtime/", test: "^TestARetriedUserChangeKeepsItsLane$",
		file: "pkg/runtime/action.go", old: "c.queue.Finished(key, err != nil && !plug.IsTerminal(err))", new: "c.queue.Finished(key, false)",
	},
	{
		name: "stuck-handler-not-shown", pkg: "./pkg/runtime/", test: "^TestActionTimeout$",
		file: "pkg/runtime/internal/inflight/inflight.go", old: "\t\td.held.Mark(d.cause.r.Key.String())\n", new: "",
	},
	{
		name: "own-children-not-handled-again", pkg: "./pkg/runtime/", test: "^TestOwnChildOperationsConverge$",
		file: "pkg/runtime/action.go", old: "if changed {", new: "if false && changed {",
	},
	{
		name: "step-before-the-operator-saw", pkg: "./docs/patterns/", test: "^TestStepWaitsForTheOperator$",
		file: "pkg/optest/clock.go", old: "\tc.kit.WaitSeen(c.t)\n\tc.FakeClock.Step(d)", new: "\tc.FakeClock.Step(d)",
	},
	{
		name: "retained-kind-deleted-now-without-rbac", pkg: "./gen/generators/", test: "^TestGolden$",
		file: "gen/rbac/rbac.go", old: "if slices.Contains(spec.Retain, o) && !deletesNow {", new: "if slices.Contains(spec.Retain, o) {",
	},
	{
		// The operator's Events fail quietly (the runtime logs and drops
		// them), so only the audit of its requests sees the verb missing.
		name: "role-without-event-create", pkg: "./examples/hello-operator/", test: "^TestTheRolesAllowEveryRequest$",
		file: "examples/hello-operator/config/rbac/role.yaml", old: "  - events\n  verbs:\n  - create\n  - patch\n", new: "  - events\n  verbs:\n  - patch\n",
	},
	{
		name: "failed-wait-hides-what-it-saw", pkg: "./pkg/optest/", test: "^TestAFailedWaitShowsWhatItSaw$",
		file: "pkg/optest/wait.go", old: "\t\tgot = obj\n\t\tSaw(ctx, obj)\n\t\treturn match == nil", new: "\t\tgot = obj\n\t\treturn match == nil",
	},
	{
		name: "paused-leader-not-fenced", pkg: "./test/chaos/", test: "^TestPausedLeaderWritesNothing$",
		file: "pkg/runtime/internal/fence/fence.go", old: "if age := f.clock.Since(h.renewed); age > f.deadline {", new: "if age := f.clock.Since(h.renewed); false && age > f.deadline {",
	},
	{
		name: "finalized-delete-not-missed", pkg: "./test/chaos/", test: "^TestEveryDeleteIsArchivedAtEveryWorkerCount$",
		file: "pkg/runtime/finalize.go", old: "if !f.late || IsPaused(last) || ran {", new: "if !f.late || IsPaused(last) || slices.Contains(last.GetFinalizers(), f.name) || ran {",
	},
	{
		name: "denied-check-taken-as-clean", pkg: "./pkg/webhook/", test: "^TestRegistrationCheckSurvivesAForbiddenStart$",
		file: "pkg/webhook/stale.go", old: "\t\t\treturn &deniedError{err}", new: "\t\t\tcontinue",
	},
	{
		name: "throttling-not-counted", pkg: "./pkg/runtime/", test: "^TestThrottlingIsCounted$",
		file: "pkg/runtime/internal/observe/throttle.go", old: "resp.StatusCode == http.StatusTooManyRequests", new: "resp.StatusCode == 0",
	},
	{
		name: "preview-patch-not-dry-run", pkg: "./pkg/runtime/", test: "^TestPreviewCoversEveryWritePath$",
		file: "pkg/runtime/internal/preview/preview.go", old: "resp, err := rt.next.RoundTrip(dry)",
		new: "if r.Method == http.MethodPatch {\n\t\tdry = r\n\t}\n\tresp, err := rt.next.RoundTrip(dry)",
	},
	{
		name: "preview-events-not-dry-run", pkg: "./pkg/runtime/", test: "^TestPreviewCoversEveryWritePath$",
		file: "pkg/runtime/internal/preview/preview.go", old: `var exemptPaths = []string{"/apis/authentication.k8s.io/",`,
		new: `var exemptPaths = []string{"/apis/events.k8s.io/", "/apis/authentication.k8s.io/",`,
	},
	{
		name: "preview-delete-options-not-dry-run", pkg: "./pkg/runtime/", test: "^TestPreviewCoversEveryWritePath$",
		file: "pkg/runtime/internal/preview/preview.go", old: `opts["dryRun"] = []string{"All"}`, new: `opts["dryRun"] = []string{}`,
	},
	{
		name: "preview-handler-clients-not-wrapped", pkg: "./pkg/runtime/", test: "^TestPreviewCoversEveryWritePath$",
		file: "pkg/runtime/operator.go", old: "o.config.Wrap(o.preview.Wrap)", new: "_ = o.config",
	},
	{
		name: "preview-cache-ignores-version", pkg: "./pkg/runtime/internal/preview/", test: "^TestLiveReadsTheVersionTheDryRunRanOver$",
		file: "pkg/runtime/internal/preview/live.go", old: `return obj, rv != "" && rv == nested(obj, "metadata", "resourceVersion")`, new: `return obj, rv != "" || rv == nested(obj, "metadata", "resourceVersion")`,
	},
	{
		name: "echo-taken-for-a-change", pkg: "./pkg/runtime/", test: "^(TestAFlappingHandlerIsCaught|TestEveryTriggerIsLoggedTracedAndCounted)$",
		file: "pkg/runtime/triggers.go", old: "if !revs.Has(rv) {", new: "if _ = rv; true {",
	},
	{
		name: "hot-loop-not-backed-off", pkg: "./pkg/runtime/", test: "^TestAFlappingHandlerIsCaught$",
		file: "pkg/runtime/hotloop.go", old: "h.queue.AddRateLimited(key)\n\t\treturn true", new: "h.queue.Add(key)\n\t\treturn true",
	},
}

func main() {
	run := flag.String("run", "", "run only the mutants whose name matches this regexp")
	flag.Parse()
	re, err := regexp.Compile(*run)
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bad := 0
	for _, m := range mutants {
		if !re.MatchString(m.name) {
			continue
		}
		verdict, detail, took := m.try(ctx)
		fmt.Printf("%-34s %-44s %-9s %5.1fs  %s\n", m.name, m.test, verdict, took.Seconds(), detail)
		if verdict != "killed" {
			bad++
		}
		if ctx.Err() != nil {
			break
		}
	}
	if bad > 0 {
		fail(fmt.Errorf("%d mutant(s) not killed: a test that cannot fail for its reason, or a mutant to mend", bad))
	}
}

// try applies m, runs its test and restores the file: "killed" when the
// test failed, "SURVIVED" when it passed, "INVALID" when the mutant does
// not apply or does not build.
func (m mutant) try(ctx context.Context) (verdict, detail string, took time.Duration) {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return "INVALID", err.Error(), 0
	}
	if !bytes.Contains(orig, []byte(m.old)) {
		return "INVALID", fmt.Sprintf("%s no longer holds %q: mend the mutant", m.file, m.old), 0
	}
	if err := os.WriteFile(m.file, bytes.ReplaceAll(orig, []byte(m.old), []byte(m.new)), 0o644); err != nil {
		return "INVALID", err.Error(), 0
	}
	defer func() {
		if err := os.WriteFile(m.file, orig, 0o644); err != nil {
			fail(fmt.Errorf("restore %s: %w (restore it with git checkout)", m.file, err))
		}
	}()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-timeout", "10m", "-run", m.test, m.pkg)
	cmd.Env = append(os.Environ(), m.env...)
	out, err := cmd.CombinedOutput()
	took = time.Since(start)
	switch {
	case err == nil:
		return "SURVIVED", "the test passed with the code broken", took
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return "INVALID", "does not build: " + firstLine(out, regexp.MustCompile(`\.go:\d+:\d+: .*`)), took
	}
	return "killed", firstLine(out, regexp.MustCompile(`(?m)^\s+(Messages|Error):\s+(.*)$`)), took
}

// firstLine is the first match of re in out, trimmed, or "".
func firstLine(out []byte, re *regexp.Regexp) string {
	m := re.Find(out)
	return strings.Join(strings.Fields(string(m)), " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutants:", err)
	os.Exit(1)
}
