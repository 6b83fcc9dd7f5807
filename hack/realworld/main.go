// Command realworld runs opgen on a corpus of public operators, downloaded
// as Go modules by version from the module proxy, and compares what it
// writes with what controller-gen and code-generator write with each
// project's own options (projects.go). Nothing of the projects is
// committed: each run downloads them into the module cache and works on
// copies in a temporary directory.
//
//	make conformance-realworld              # every project, about 15 minutes
//	go run ./hack/realworld -only kueue,kwok # some of them
//
// For each project it prints one row: whether opgen generate accepts the
// project as it is (no option, rc 0, warnings allowed), how many CRDs and
// client files equal the reference tools', whether the conversions and
// defaulters equal theirs, and whether the packages build and the
// project's own API tests pass after opgen's generation. It exits 1 when a
// row fails. The table is quoted in docs/migrating.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	only := flag.String("only", "", "comma-separated names of the projects to run (default: all)")
	work := flag.String("work", "", "working directory (default: a new temporary directory, removed at the end unless -keep)")
	keep := flag.Bool("keep", false, "keep the working directory, with each project's copies and logs")
	list := flag.Bool("list", false, "list the corpus and exit")
	flag.Parse()
	if *list {
		for _, p := range corpus {
			fmt.Printf("%-26s %s@%s\n    %s\n", p.name, p.module, p.version, p.traits)
		}
		return
	}
	selected, err := selectProjects(*only)
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, cleanup, err := workDir(*work, *keep)
	if err != nil {
		fail(err)
	}
	defer cleanup()
	ws, err := newWorkspace(ctx, dir)
	if err != nil {
		fail(err)
	}
	var rows []*row
	for _, p := range selected {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "realworld: %s %s@%s (logs in %s)\n", p.name, p.module, p.version, ws.logDir(p))
		r := ws.run(ctx, p)
		fmt.Fprintf(os.Stderr, "realworld: %s done in %v: %s\n", p.name, time.Since(start).Round(time.Second), r.verdict())
		rows = append(rows, r)
		if ctx.Err() != nil {
			break
		}
	}
	printTable(os.Stdout, rows)
	for _, r := range rows {
		if !r.ok() {
			os.Exit(1)
		}
	}
}

func selectProjects(only string) ([]project, error) {
	if only == "" {
		return corpus, nil
	}
	var out []project
	for _, name := range strings.Split(only, ",") {
		i := slices.IndexFunc(corpus, func(p project) bool { return p.name == name })
		if i < 0 {
			var names []string
			for _, p := range corpus {
				names = append(names, p.name)
			}
			return nil, fmt.Errorf("-only %s: no such project; pick from %s", name, strings.Join(names, ", "))
		}
		out = append(out, corpus[i])
	}
	return out, nil
}

func workDir(dir string, keep bool) (string, func(), error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", nil, err
		}
		return abs, func() {}, os.MkdirAll(abs, 0o755)
	}
	tmp, err := os.MkdirTemp("", "opgen-realworld-")
	if err != nil {
		return "", nil, err
	}
	if keep {
		return tmp, func() { fmt.Fprintf(os.Stderr, "realworld: kept %s\n", tmp) }, nil
	}
	return tmp, func() { _ = chmodAll(tmp); _ = os.RemoveAll(tmp) }, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "realworld:", err)
	os.Exit(2)
}
