package adopt

import (
	"fmt"
	"regexp"
	"strings"
)

// Command is the recipe of the manifests and generate targets of an
// adopted project, for the operator named name, with the flags that carry
// over the project's options (ReadOptions). One run writes both the
// manifests and the code; the second target of `make test` finds nothing
// changed and returns at once.
func Command(name string, flags []string) string {
	args := append([]string{"go", "tool", "opgen", "generate", "--layout", "kubebuilder", "--name", name}, flags...)
	for i, a := range args {
		if strings.ContainsAny(a, " \t$\"'") {
			args[i] = "'" + a + "'"
		}
	}
	return strings.Join(append(args, "./..."), " ")
}

// CommandArgs are the arguments of opgen generate that Command runs.
func CommandArgs(name string, flags []string) []string {
	return append([]string{"--layout", "kubebuilder", "--name", name}, flags...)
}

// envtestVersions match the Makefile's definitions that derive
// setup-envtest's version from controller-runtime's in go.mod, and the
// Kubernetes version of its binaries from k8s.io/api's, with the lines
// that continue them.
var envtestVersions = map[string]*regexp.Regexp{
	"ENVTEST_VERSION":     regexp.MustCompile(`^ENVTEST_VERSION\s*\??=`),
	"ENVTEST_K8S_VERSION": regexp.MustCompile(`^ENVTEST_K8S_VERSION\s*\??=`),
}

// PinVersions returns the Makefile with the variables of pins (name to
// value: ENVTEST_VERSION, ENVTEST_K8S_VERSION) defined as those values,
// in the place of their definitions, with a comment saying why: adopting
// opgen moved what they were derived from.
func PinVersions(src string, pins map[string]string) string {
	lines := strings.Split(src, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		pinned := ""
		for name, re := range envtestVersions {
			if v, ok := pins[name]; ok && re.MatchString(lines[i]) {
				pinned = name + " ?= " + v
			}
		}
		if pinned == "" {
			out = append(out, lines[i])
			continue
		}
		for strings.HasSuffix(strings.TrimRight(lines[i], " \t"), "\\") && i+1 < len(lines) {
			i++
		}
		out = append(out, "# Pinned by opgen adopt to what go.mod required before opgen joined the", "# module graph, which moved it: setup-envtest is released with it.", pinned)
	}
	return strings.Join(out, "\n")
}

// targetLine matches a rule line: the target, its prerequisites and a
// "## help" comment.
var targetLine = regexp.MustCompile(`^([A-Za-z0-9_.$()/-]+):([^=#]*?)(\s*##.*)?$`)

// RewriteMakefile returns the Makefile with the recipes of the manifests
// and generate targets replaced by cmd, and controller-gen dropped from
// their prerequisites; then, when nothing else uses controller-gen, its
// download target and variables removed. It fails when either target is
// missing, naming what to add.
func RewriteMakefile(src, cmd string) (string, error) {
	lines := strings.Split(src, "\n")
	for _, target := range []string{"manifests", "generate"} {
		var ok bool
		if lines, ok = rewriteTarget(lines, target, cmd); !ok {
			return "", fmt.Errorf("the Makefile has no %s target: add one that runs %q", target, cmd)
		}
	}
	if !usesControllerGen(lines) {
		lines = dropControllerGen(lines)
	}
	return strings.Join(lines, "\n"), nil
}

// rewriteTarget replaces the recipe of target with cmd.
func rewriteTarget(lines []string, target, cmd string) ([]string, bool) {
	for i, l := range lines {
		m := targetLine.FindStringSubmatch(l)
		if m == nil || m[1] != target {
			continue
		}
		rule := target + ":" + withoutControllerGen(m[2]) + m[3]
		end := i + 1
		for end < len(lines) && strings.HasPrefix(lines[end], "\t") {
			end++
		}
		out := append([]string{}, lines[:i]...)
		out = append(out, rule, "\t"+cmd)
		return append(out, lines[end:]...), true
	}
	return lines, false
}

func withoutControllerGen(prereqs string) string {
	var kept []string
	for _, p := range strings.Fields(prereqs) {
		if p != "controller-gen" && p != "$(CONTROLLER_GEN)" {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return " " + strings.Join(kept, " ")
}

// controllerGenDefs are the lines that define controller-gen's download:
// the variables, the phony target and the binary's rule with its recipe.
var controllerGenDefs = regexp.MustCompile(`^(CONTROLLER_GEN\s*\??=|CONTROLLER_TOOLS_VERSION\s*\??=|\.PHONY:\s*controller-gen\s*$|controller-gen:|\$\(CONTROLLER_GEN\):)`)

// usesControllerGen reports whether a line other than its definitions
// mentions controller-gen.
func usesControllerGen(lines []string) bool {
	inDef := false
	for _, l := range lines {
		switch {
		case controllerGenDefs.MatchString(l):
			inDef = true
			continue
		case inDef && strings.HasPrefix(l, "\t"):
			continue
		}
		inDef = false
		if strings.Contains(l, "CONTROLLER_GEN") || strings.Contains(l, "controller-gen") || strings.Contains(l, "CONTROLLER_TOOLS_VERSION") {
			return true
		}
	}
	return false
}

// dropControllerGen removes the definitions usesControllerGen skips, and
// a blank line left doubled where they were.
func dropControllerGen(lines []string) []string {
	var out []string
	inDef, justDropped := false, false
	for _, l := range lines {
		switch {
		case controllerGenDefs.MatchString(l):
			inDef, justDropped = true, true
			continue
		case inDef && strings.HasPrefix(l, "\t"):
			continue
		case justDropped && l == "" && len(out) > 0 && out[len(out)-1] == "":
			continue
		}
		inDef, justDropped = false, false
		out = append(out, l)
	}
	return out
}
