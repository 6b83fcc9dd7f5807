package adopt

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Options are what a project passes controller-gen and code-generator,
// read from its Makefile and hack scripts, as opgen generate's flags, and
// what has no flag.
type Options struct {
	// Flags are opgen generate's flags with the same effect, in order.
	Flags []string
	// Notes say what adopt found and did not carry over, and why.
	Notes []string
}

// controllerGenCall matches a command line that runs controller-gen: the
// Makefile's variable or the command itself.
var controllerGenCall = regexp.MustCompile(`(?:\$\(CONTROLLER_GEN\)|\bcontroller-gen)"?\s+(.*)$`)

// ReadOptions reads the options of the controller-gen calls of a Makefile
// and of the kube_codegen.sh calls of hack scripts (by name, their text).
func ReadOptions(makefile string, scripts map[string]string) Options {
	var o Options
	for _, line := range joinContinued(makefile) {
		if m := controllerGenCall.FindStringSubmatch(line); m != nil {
			for _, arg := range shellFields(m[1]) {
				o.controllerGen(arg)
			}
		}
		if m := opgenCall.FindStringSubmatch(line); m != nil {
			o.opgen(shellFields(m[1]))
		}
	}
	names := make([]string, 0, len(scripts))
	for name := range scripts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, line := range joinContinued(scripts[name]) {
			if fields := shellFields(line); len(fields) > 0 && fields[0] == "kube::codegen::gen_client" {
				o.genClient(name, fields[1:])
			}
		}
	}
	return o
}

// opgenCall matches the command line an earlier adoption wrote.
var opgenCall = regexp.MustCompile(`\bopgen generate\s+(.*)$`)

// opgen keeps the flags of an earlier adoption's command: adopting again
// changes nothing.
func (o *Options) opgen(args []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--layout" || a == "--name":
			i++
		case strings.HasPrefix(a, "--"):
			flag := []string{}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") && !strings.HasPrefix(args[i+1], "./") {
				flag = append(flag, args[i+1])
				i++
			}
			o.add(a, flag...)
		}
	}
}

// controllerGen carries over one argument of a controller-gen call.
func (o *Options) controllerGen(arg string) {
	gen, opts, _ := strings.Cut(arg, ":")
	switch gen {
	case "crd":
		for _, opt := range splitOptions(opts) {
			o.crdOption(opt)
		}
	case "object":
		for _, opt := range splitOptions(opts) {
			key, value, _ := strings.Cut(opt, "=")
			switch key {
			case "headerFile":
				o.add("--header-file", unquote(value))
			case "year":
				if !strings.Contains(value, "$") {
					o.add("--header-year", unquote(value))
				}
			}
		}
	case "output":
		// output:crd:artifacts:config=DIR and output:crd:dir=DIR place
		// the CRDs: the kubebuilder layout's config/crd/bases, or the
		// project's own.
		rest, dir, ok := strings.Cut(opts, "=")
		if ok && (rest == "crd:artifacts:config" || rest == "crd:dir") && path.Clean(unquote(dir)) != "config/crd/bases" {
			o.add("--crd-dir", path.Clean(unquote(dir)))
		}
	}
}

// crdOption carries over one of controller-gen's crd options.
func (o *Options) crdOption(opt string) {
	key, value, _ := strings.Cut(opt, "=")
	value = unquote(value)
	switch {
	case key == "crdVersions" && value == "v1":
	case key == "generateEmbeddedObjectMeta" && value == "true":
		o.add("--generate-embedded-object-meta")
	case key == "allowDangerousTypes" && value == "true":
		o.add("--allow-dangerous-types")
	case key == "ignoreUnexportedFields" && value == "true":
		o.add("--ignore-unexported-fields")
	case key == "maxDescLen":
		o.add("--crd-max-desc-len", value)
	case key == "headerFile" || key == "year":
		// The CRDs get the header of object:headerFile.
	case value == "false":
	default:
		o.Notes = append(o.Notes, fmt.Sprintf("controller-gen's crd:%s has no opgen generate flag; opgen writes the CRDs without it", opt))
	}
}

// genClient carries over the flags of a kube_codegen.sh gen_client call
// of script.
func (o *Options) genClient(script string, args []string) {
	var inDir, outDir, oneInput string
	names := map[string]string{}
	var trees []string
	o.add("--clients", "genclient")
	for i := 0; i < len(args); i++ {
		arg := args[i]
		value := func() string {
			if i+1 < len(args) {
				i++
				return unquote(args[i])
			}
			return ""
		}
		switch arg {
		case "--output-dir":
			outDir = relative(value())
		case "--output-pkg", "--lint-rules":
			value()
		case "--boilerplate":
			o.add("--header-file", relative(value()))
		case "--with-watch":
			trees = append(trees, "listers", "informers")
		case "--with-applyconfig":
			trees = append(trees, "applyconfiguration")
		case "--applyconfig-externals":
			o.add("--applyconfig-externals", value())
		case "--applyconfig-openapi-schema":
			o.add("--applyconfig-openapi-schema", relative(value()))
		case "--plural-exceptions":
			o.add("--plural-exceptions", value())
		case "--prefers-protobuf":
			o.add("--prefers-protobuf")
		case "--versioned-name":
			o.add("--versioned-name", value())
		case "--clientset-name", "--listers-name", "--informers-name", "--applyconfig-name":
			names[arg] = value()
		case "--one-input-api":
			oneInput = value()
		default:
			if strings.HasPrefix(arg, "--") {
				o.Notes = append(o.Notes, fmt.Sprintf("%s: gen_client's %s has no opgen generate flag", script, arg))
				continue
			}
			inDir = relative(arg)
		}
	}
	if outDir != "" {
		o.add("--client-dir", outDir)
	}
	for _, f := range [][2]string{{"--clientset-name", "--clientset-dir"}, {"--listers-name", "--listers-dir"}, {"--informers-name", "--informers-dir"}, {"--applyconfig-name", "--applyconfig-dir"}} {
		if name, ok := names[f[0]]; ok {
			o.add(f[1], path.Join(outDir, name))
		}
	}
	o.add("--client-trees", strings.Join(append([]string{"clientset"}, trees...), ","))
	if oneInput != "" && inDir != "" {
		o.add("--client-packages", "./"+path.Join(inDir, oneInput))
	}
	o.Notes = append(o.Notes, fmt.Sprintf("%s runs code-generator's gen_client: opgen generate now writes the same clients with the flags above, so that call can go", script))
}

// add appends a flag, once.
func (o *Options) add(flag string, value ...string) {
	for i := 0; i < len(o.Flags); i++ {
		if o.Flags[i] == flag {
			return
		}
	}
	o.Flags = append(o.Flags, flag)
	o.Flags = append(o.Flags, value...)
}

// joinContinued joins the lines a backslash continues.
func joinContinued(text string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasSuffix(strings.TrimRight(line, " \t"), "\\") {
			cur += strings.TrimSuffix(strings.TrimRight(line, " \t"), "\\") + " "
			continue
		}
		out = append(out, cur+line)
		cur = ""
	}
	return out
}

// shellFields splits a command line into words, keeping quoted words
// whole.
func shellFields(line string) []string {
	var out []string
	var cur strings.Builder
	quote := byte(0)
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '#' && !in:
			return out
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// splitOptions splits controller-gen's comma-separated options.
func splitOptions(s string) []string {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o != "" {
			out = append(out, o)
		}
	}
	return out
}

func unquote(s string) string { return strings.Trim(s, `"'`) }

// relative turns a script's path under its project root variable
// (${SCRIPT_ROOT}/apis, $(pwd)/apis) into a path relative to the root.
func relative(p string) string {
	p = unquote(p)
	if i := strings.Index(p, "}/"); strings.HasPrefix(p, "${") && i > 0 {
		p = p[i+2:]
	}
	if i := strings.Index(p, ")/"); strings.HasPrefix(p, "$(") && i > 0 {
		p = p[i+2:]
	}
	return path.Clean(p)
}
