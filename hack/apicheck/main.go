// Command apicheck holds the SDK's Go API to its contract: it compares the
// exported API of the packages under pkg/ with their API at the last
// release, with golang.org/x/exp/apidiff, and fails when an incompatible
// change is not listed, with its migration, in the Unreleased section of
// CHANGELOG.md. The release is the one release.txt names (a tag and
// its commit, which a clone of main holds); make verify runs it.
//
// A change is listed when the section names its identifier, qualified by
// the package's name, in backquotes: `plug.DescendantStore.Prune`, or the
// type it is a member of, `plug.DescendantStore`.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	repo := flag.String("repo", "../..", "the checkout whose working tree is checked")
	release := flag.String("release", "release.txt", "the file naming the last release: a tag and its commit")
	changelog := flag.String("changelog", "CHANGELOG.md", "the changelog, relative to -repo")
	flag.Parse()
	tag, commit, err := readRelease(*release)
	if err != nil {
		fail(err)
	}
	res, err := Check(Options{Repo: *repo, Base: commit, Patterns: []string{"./pkg/..."}, Changelog: *changelog})
	if err != nil {
		fail(err)
	}
	fmt.Printf("apicheck: %d incompatible change(s) of pkg/... since %s (%s)\n", len(res.Incompatible), tag, commit[:12])
	if len(res.Unlisted) == 0 {
		return
	}
	for _, c := range res.Unlisted {
		fmt.Fprintf(os.Stderr, "  %s\n", c)
	}
	fail(fmt.Errorf("%d incompatible change(s) of the SDK's API are not in the Unreleased section of %s: list each with its migration, naming it as `%s` (or its type), or make the change compatible (add rather than change; deprecate before removing)", len(res.Unlisted), *changelog, res.Unlisted[0].Name()))
}

// readRelease reads the tag and commit of the last release from path.
func readRelease(path string) (tag, commit string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 || len(fields[1]) != 40 {
		return "", "", fmt.Errorf("%s: want one line \"<tag> <commit>\", got %q", path, strings.TrimSpace(string(data)))
	}
	return fields[0], fields[1], nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "apicheck:", err)
	os.Exit(1)
}
