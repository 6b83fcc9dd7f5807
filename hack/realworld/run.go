package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"
)

// row is what the run found for one project.
type row struct {
	p project
	// err is a failure of the run itself (a download, a reference tool).
	err error
	// asIs: opgen generate without options on the project as it is.
	asIsErr      error
	asIsWarnings int
	asIsBuildErr error
	// The comparisons with the reference tools, with the project's
	// options.
	crds, clients, conversions, defaults tally
	optsErr                              error
	cost                                 usage
	// upgraded is the version the client libraries were upgraded to for
	// the clients' comparison, or "".
	upgraded          string
	buildErr, testErr error
}

// tally counts the files of one kind the reference wrote, those opgen
// wrote the same, and names the others.
type tally struct {
	total, equal    int
	differ, missing []string
	extra           []string
	// committed counts the files opgen wrote where the reference wrote
	// none, equal to those the project committed (compareNamed).
	committed int
}

func (t tally) ok() bool { return t.equal == t.total && len(t.extra) == 0 }

func (t tally) String() string {
	if t.total == 0 && len(t.extra) == 0 && t.committed == 0 {
		return "–"
	}
	s := fmt.Sprintf("%d/%d", t.equal, t.total)
	if t.committed > 0 {
		s += fmt.Sprintf(", %d more as committed", t.committed)
	}
	if len(t.missing) > 0 {
		s += fmt.Sprintf(", %d missing", len(t.missing))
	}
	if len(t.extra) > 0 {
		s += fmt.Sprintf(", %d extra", len(t.extra))
	}
	return s
}

func (r *row) ok() bool {
	return r.err == nil && r.asIsErr == nil && r.asIsBuildErr == nil && r.optsErr == nil &&
		r.crds.ok() && r.clients.ok() && r.conversions.ok() && r.defaults.ok() &&
		r.buildErr == nil && r.testErr == nil
}

func (r *row) verdict() string {
	if r.ok() {
		return "ok"
	}
	var why []string
	add := func(what string, err error) {
		if err != nil {
			why = append(why, what+": "+firstLine(err.Error()))
		}
	}
	add("run", r.err)
	add("as is", r.asIsErr)
	add("as-is build", r.asIsBuildErr)
	add("with options", r.optsErr)
	for _, t := range []struct {
		what string
		t    tally
	}{{"CRDs", r.crds}, {"clients", r.clients}, {"conversions", r.conversions}, {"defaulters", r.defaults}} {
		if !t.t.ok() {
			why = append(why, fmt.Sprintf("%s %s (differ: %s; missing: %s; extra: %s)", t.what, t.t, short(t.t.differ), short(t.t.missing), short(t.t.extra)))
		}
	}
	add("build", r.buildErr)
	add("test", r.testErr)
	return strings.Join(why, "; ")
}

func short(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// run runs one project: download, the as-is run, then the reference tools
// and opgen with the project's options on two clean copies, the
// comparisons, the build and the tests.
func (ws *workspace) run(ctx context.Context, p project) *row {
	r := &row{p: p}
	base := filepath.Join(ws.dir, p.name)
	logs := ws.logDir(p)
	if err := os.MkdirAll(logs, 0o755); err != nil {
		r.err = err
		return r
	}
	src, err := ws.module(ctx, p)
	if err != nil {
		r.err = err
		return r
	}
	asIs, ref, gen := filepath.Join(base, "as-is"), filepath.Join(base, "reference"), filepath.Join(base, "opgen")
	for _, dst := range []string{asIs, ref, gen} {
		_ = os.RemoveAll(dst)
		if err := copyTree(src, dst); err != nil {
			r.err = err
			return r
		}
	}
	opgen := filepath.Join(ws.bin, "opgen")
	r.asIsErr = ws.opgen(ctx, asIs, filepath.Join(logs, "as-is.log"), append([]string{"generate"}, p.asIs...), &r.asIsWarnings)
	if r.asIsErr == nil {
		r.asIsBuildErr = ws.build(ctx, asIs, filepath.Join(logs, "as-is.log"), p.asIs, true)
	}
	if len(p.clientDirs) > 0 {
		// The clients code-generator writes need the client libraries of
		// its own release: opgen says so and leaves old ones alone, and
		// the comparison takes the fix it names, on both sides.
		if r.upgraded, err = ws.upgradeClientGo(ctx, []string{ref, gen}, filepath.Join(logs, "upgrade.log")); err != nil {
			r.err = fmt.Errorf("upgrade the client libraries: %w", err)
			return r
		}
	}
	for _, dir := range []string{ref, gen} {
		if err := ws.shell(ctx, dir, filepath.Join(logs, "clean.log"), p.clean); err != nil {
			r.err = fmt.Errorf("clean: %w", err)
			return r
		}
	}
	if err := ws.shell(ctx, ref, filepath.Join(logs, "reference.log"), p.reference); err != nil {
		r.err = fmt.Errorf("reference tools: %w", err)
		return r
	}
	r.cost, _, r.optsErr = ws.measure(ctx, gen, filepath.Join(logs, "opgen.log"), opgen, append([]string{"generate", "--force"}, p.opgen...)...)
	diffs := filepath.Join(logs, "diffs.log")
	r.crds = compareTrees(ref, gen, p.crdDirs, isYAML, crdEqual, diffs)
	r.clients = compareTrees(ref, gen, p.clientDirs, isGo, goEqual, diffs)
	r.conversions = compareNamed(src, ref, gen, "zz_generated.conversion.go", diffs)
	r.defaults = compareNamed(src, ref, gen, "zz_generated.defaults.go", diffs)
	if r.optsErr == nil {
		r.buildErr = ws.build(ctx, gen, filepath.Join(logs, "build.log"), p.build, false)
		if r.buildErr == nil && len(p.test) > 0 {
			_, r.testErr = ws.cmd(ctx, gen, filepath.Join(logs, "test.log"), "go", append([]string{"test", "-count=1"}, p.test...)...)
		}
	}
	return r
}

// upgradeClientGo upgrades k8s.io/client-go, api and apimachinery in dirs
// to the version opgen's go.mod pins, when the module requires an older
// minor release, and returns that version ("" when nothing changed). A
// module that requires controller-runtime gets opgen's too: an older one
// does not build against the newer client-go.
func (ws *workspace) upgradeClientGo(ctx context.Context, dirs []string, log string) (string, error) {
	pinned, err := ws.repoCmd(ctx, "list", "-m", "-f", "{{.Version}}", "k8s.io/client-go")
	if err != nil {
		return "", err
	}
	pinned = strings.TrimSpace(pinned)
	have, err := ws.cmd(ctx, dirs[0], log, "go", "list", "-m", "-f", "{{.Version}}", "k8s.io/client-go")
	if err != nil {
		return "", err
	}
	if semver.Compare(semver.MajorMinor(strings.TrimSpace(have)), semver.MajorMinor(pinned)) >= 0 {
		return "", nil
	}
	get := []string{"get", "k8s.io/client-go@" + pinned, "k8s.io/api@" + pinned, "k8s.io/apimachinery@" + pinned}
	if _, err := ws.cmd(ctx, dirs[0], log, "go", "list", "-m", "sigs.k8s.io/controller-runtime"); err == nil {
		runtime, err := ws.repoCmd(ctx, "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/controller-runtime")
		if err != nil {
			return "", err
		}
		get = append(get, "sigs.k8s.io/controller-runtime@"+runtime)
	}
	for _, dir := range dirs {
		if _, err := ws.cmd(ctx, dir, log, "go", get...); err != nil {
			return "", err
		}
	}
	return pinned, nil
}

// opgen runs opgen with args in dir and counts the warnings it printed.
func (ws *workspace) opgen(ctx context.Context, dir, log string, args []string, warnings *int) error {
	script := append([]string{"-c", `"$0" "$@" 2>&1`, filepath.Join(ws.bin, "opgen")}, args...)
	_, err := ws.cmd(ctx, dir, log, "bash", script...)
	data, _ := os.ReadFile(log)
	*warnings = strings.Count(string(data), "opgen: warning:")
	return err
}

// build builds patterns in dir; asIs adds opgen's default client
// directory, where a run without options writes the clients.
func (ws *workspace) build(ctx context.Context, dir, log string, patterns []string, asIs bool) error {
	args := append([]string{"build"}, patterns...)
	if asIs && exists(filepath.Join(dir, "pkg", "generated")) {
		args = append(args, "./pkg/generated/...")
	}
	_, err := ws.cmd(ctx, dir, log, "go", args...)
	return err
}

// printTable writes the rows as a Markdown table.
func printTable(w io.Writer, rows []*row) {
	fmt.Fprintln(w, "| project | version | as is | CRDs equal | client files equal | conversions equal | defaulters equal | build | API tests | opgen (s, MiB) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	mark := func(err error) string {
		if err != nil {
			return "fails"
		}
		return "ok"
	}
	ran := func(r *row, err error) string {
		if r.optsErr != nil {
			return "–"
		}
		return mark(err)
	}
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(w, "| %s | %s | %s |  |  |  |  |  |  |  |\n", r.p.name, r.p.version, "error: "+firstLine(r.err.Error()))
			continue
		}
		asIs := "rc 0"
		if r.asIsErr != nil {
			asIs = "rc 1"
		} else if r.asIsBuildErr != nil {
			asIs = "rc 0, does not build"
		}
		if r.asIsWarnings > 0 {
			asIs += fmt.Sprintf(", %d warnings", r.asIsWarnings)
		}
		test := ran(r, r.testErr)
		if len(r.p.test) == 0 {
			test = "–"
		}
		opts := fmt.Sprintf("%.1f, %d", r.cost.wall.Seconds(), r.cost.rss>>20)
		if r.optsErr != nil {
			opts = "rc 1"
		}
		clients := r.clients.String()
		if r.upgraded != "" {
			clients += " (client-go " + r.upgraded + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.p.name, r.p.version, asIs,
			r.crds, clients, r.conversions, r.defaults, ran(r, r.buildErr), test, opts)
	}
}
