// Command walk lists the files of pkg/ that one event runs through. It
// builds and runs hack/walk/event, which handles one new object (see
// there), and prints
//
//   - the path: the files on the call stacks where the informer hands the
//     runtime the object, where the handler runs and where each write
//     leaves the process, in the order a reader meets them (outermost
//     first, the informer's stack, then the handler's, then the writes');
//     what a reader follows from the informer to the handler and its
//     writes;
//   - everything it ran: each file of pkg/ with the statements the
//     handling ran (coverage), helpers and telemetry included.
//
// With -max, it fails when the path crosses more files.
//
//	go run ./hack/walk [-max 15]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const module = "github.com/opgen-sdk/opgen/"

func main() {
	bound := flag.Int("max", 0, "fail when the walk crosses more files than this (0: no bound)")
	flag.Parse()
	if err := run(*bound); err != nil {
		fmt.Fprintln(os.Stderr, "walk:", err)
		os.Exit(1)
	}
}

func run(bound int) error {
	dir, err := os.MkdirTemp("", "opgen-walk-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	counters := filepath.Join(dir, "counters")
	if err := os.Mkdir(counters, 0o755); err != nil {
		return err
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(dir, "event")
	fmt.Fprintln(os.Stderr, "building hack/walk/event with -cover (a minute or two)")
	// The main package is instrumented too: without it, the coverage
	// runtime has no meta-data to write.
	build := exec.Command("go", "build", "-cover", "-covermode=atomic", "-coverpkg="+module+"pkg/...,./hack/walk/event", "-o", bin, "./hack/walk/event")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./hack/walk/event: %w", err)
	}
	event := exec.Command(bin)
	event.Dir, event.Stdout, event.Stderr = root, os.Stderr, os.Stderr
	stacksFile := filepath.Join(dir, "stacks.txt")
	event.Env = append(os.Environ(), "GOCOVERDIR="+counters, "WALK_STACKS="+stacksFile)
	if err := event.Run(); err != nil {
		return fmt.Errorf("hack/walk/event: %w", err)
	}
	profile := filepath.Join(dir, "profile.txt")
	if out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i="+counters, "-o="+profile).CombinedOutput(); err != nil {
		return fmt.Errorf("go tool covdata textfmt: %w: %s", err, out)
	}
	ran, err := statementsRun(profile)
	if err != nil {
		return err
	}
	if len(ran) == 0 {
		return fmt.Errorf("no counters in %s", counters)
	}
	stacks, err := os.ReadFile(stacksFile)
	if err != nil {
		return err
	}
	path := pathFiles(string(stacks))
	fmt.Println("The path, in order (files on the stacks of the informer's delivery, the handler and the writes):")
	for i, f := range path {
		note := ""
		if f == queue {
			note = "  (the queue: the hand-off from the informer's goroutine to a worker's, on neither's stack)"
		}
		fmt.Printf("%3d  %s%s\n", i+1, f, note)
	}
	fmt.Printf("%d files in %d packages\n\n", len(path), packages(path))
	fmt.Println("Everything the handling ran (statements run, by file):")
	files := make([]string, 0, len(ran))
	for f := range ran {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		fmt.Printf("%5d  %s\n", ran[f], f)
	}
	fmt.Printf("%d files in %d packages\n\n", len(files), packages(files))
	fmt.Printf("The stacks:\n%s", stacks)
	if bound > 0 && len(path) > bound {
		return fmt.Errorf("the path crosses %d files, more than %d", len(path), bound)
	}
	return nil
}

// queue is the file of the controller's work queue. The informer's
// goroutine hands keys to it and a worker's takes them, so it is on
// neither's stack while the event passes: pathFiles puts it after the
// informer's files.
const queue = "pkg/runtime/internal/lanes/lanes.go"

// pathFiles returns the files the stacks name, each once, in the order
// they first appear, the stack of the informer's delivery first, then the
// queue.
func pathFiles(stacks string) []string {
	// Each record is a "# where" line and its frames.
	var informer, rest []string
	for _, record := range strings.Split(stacks, "# ")[1:] {
		_, frames, _ := strings.Cut(record, "\n")
		if strings.HasPrefix(record, "informer") {
			informer = append(informer, frames)
		} else {
			rest = append(rest, frames)
		}
	}
	stacks = strings.Join(informer, "") + queue + ":0\n" + strings.Join(rest, "")
	var files []string
	seen := map[string]bool{}
	for _, line := range strings.Split(stacks, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		file, _, _ := strings.Cut(line, ":")
		if !seen[file] {
			seen[file] = true
			files = append(files, file)
		}
	}
	return files
}

// packages counts the directories of files.
func packages(files []string) int {
	dirs := map[string]bool{}
	for _, f := range files {
		dirs[filepath.Dir(f)] = true
	}
	return len(dirs)
}

// statementsRun reads a text coverage profile and returns, for each file
// of pkg/ that is not generated, the statements whose blocks ran.
func statementsRun(profile string) (map[string]int, error) {
	f, err := os.Open(profile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ran := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// name.go:line.col,line.col statements count
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		count, err1 := strconv.Atoi(fields[2])
		stmts, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil || count == 0 || stmts == 0 || !strings.HasPrefix(fields[0], module+"pkg/") || strings.HasPrefix(fields[0], module+"pkg/testenv/") {
			continue
		}
		file := strings.TrimPrefix(fields[0][:strings.LastIndex(fields[0], ":")], module)
		if strings.HasPrefix(filepath.Base(file), "zz_generated") {
			continue
		}
		ran[file] += stmts
	}
	return ran, sc.Err()
}
