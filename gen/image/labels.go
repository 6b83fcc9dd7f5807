package image

import (
	"debug/buildinfo"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Labels of the image config beyond the org.opencontainers.image.* ones:
// what the binary was built from, read back from its build information.
const (
	// ModulesLabel lists every Go module linked into the binary, one per
	// line: "path version sum", with "=> path version sum" after a
	// replaced one. It is the binary's `go version -m`, kept where
	// registries and scanners read labels.
	ModulesLabel = "dev.opgen.image.modules"
	// GoLabel is the Go toolchain that built the binary.
	GoLabel = "dev.opgen.image.go"
	// MainLabel is the main package's import path.
	MainLabel = "dev.opgen.image.main"
)

// OCI's annotation keys, used as labels too (opencontainers/image-spec,
// annotations.md).
const (
	labelTitle       = "org.opencontainers.image.title"
	labelDescription = "org.opencontainers.image.description"
	labelCreated     = "org.opencontainers.image.created"
	labelVersion     = "org.opencontainers.image.version"
)

// labels are the config's labels for the binary at bin, with
// Options.Labels over them.
func (o Options) labels(bin string) (map[string]string, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("image: read the build information of %s: %w", o.Main, err)
	}
	labels := map[string]string{
		labelTitle:       o.Name,
		labelDescription: o.Name + ", a Kubernetes operator built with opgen",
		labelCreated:     o.Created.UTC().Format(time.RFC3339),
		GoLabel:          bi.GoVersion,
		MainLabel:        bi.Path,
		ModulesLabel:     modules(bi),
	}
	// A build inside its module's checkout says "(devel)": no version.
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		labels[labelVersion] = v
	}
	maps.Copy(labels, o.Labels)
	return labels, nil
}

func modules(bi *buildinfo.BuildInfo) string {
	var b strings.Builder
	for _, d := range bi.Deps {
		b.WriteString(module(d))
		if d.Replace != nil {
			b.WriteString(" => " + module(d.Replace))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// module is "path version sum", without the fields a module lacks (a
// replacement by a directory has neither version nor sum).
func module(m *debug.Module) string {
	return strings.Join(slices.DeleteFunc([]string{m.Path, m.Version, m.Sum}, func(s string) bool { return s == "" }), " ")
}

// indexAnnotations are the labels an image index carries too, so that a
// registry shows them on the tag.
func indexAnnotations(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range []string{labelTitle, labelDescription, labelCreated, labelVersion} {
		if v, ok := labels[k]; ok {
			out[k] = v
		}
	}
	return out
}
