package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// noopOnly skips the conventional chain and opgen's cold and warm runs at
// scale: one run stamps the project, then the no-op runs follow.
var noopOnly = flag.Bool("noop", false, "with -kinds, measure only opgen's no-op (after one run that stamps the project)")

// kindsPerGroup is how many kinds each synthetic group version holds.
const kindsPerGroup = 5

// scaleGroups returns the group names of a synthetic API with n kinds.
func scaleGroups(n int) []string {
	var out []string
	for i := range (n + kindsPerGroup - 1) / kindsPerGroup {
		out = append(out, fmt.Sprintf("g%03d", i))
	}
	return out
}

var scaleDoc = template.Must(template.New("doc").Parse(`// Package v1 is a synthetic API group of the code generation benchmark.
//
// +groupName={{.}}.bench.example
package v1
`))

var scaleTypes = template.Must(template.New("types").Parse(`package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// {{.Kind}}Spec is the desired state of a {{.Kind}}.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.replicas",message="minReplicas must not exceed replicas"
type {{.Kind}}Spec struct {
	// Image is a container image.
	// +kubebuilder:validation:MinLength=1
	Image string ` + "`json:\"image\"`" + `
	// Replicas is the desired count.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas int32 ` + "`json:\"replicas,omitempty\"`" + `
	// MinReplicas bounds scaling down.
	// +optional
	MinReplicas *int32 ` + "`json:\"minReplicas,omitempty\"`" + `
	// Tier is the service class.
	// +kubebuilder:validation:Enum=dev;staging;prod
	// +optional
	Tier string ` + "`json:\"tier,omitempty\"`" + `
	// Env are the variables.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []{{.Kind}}Env ` + "`json:\"env,omitempty\"`" + `
	// Ports are the named ports.
	// +optional
	Ports []{{.Kind}}Port ` + "`json:\"ports,omitempty\"`" + `
	// Labels are copied to owned objects.
	// +optional
	Labels map[string]string ` + "`json:\"labels,omitempty\"`" + `
	// Template is a nested part.
	// +optional
	Template *{{.Kind}}Template ` + "`json:\"template,omitempty\"`" + `
}

// {{.Kind}}Env is a variable.
type {{.Kind}}Env struct {
	Name  string ` + "`json:\"name\"`" + `
	Value string ` + "`json:\"value,omitempty\"`" + `
}

// {{.Kind}}Port is a named port.
type {{.Kind}}Port struct {
	Name string ` + "`json:\"name\"`" + `
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 ` + "`json:\"port\"`" + `
}

// {{.Kind}}Template is a nested part of the spec.
type {{.Kind}}Template struct {
	// +optional
	Annotations map[string]string ` + "`json:\"annotations,omitempty\"`" + `
	// +optional
	Args []string ` + "`json:\"args,omitempty\"`" + `
	// +optional
	Timeout *metav1.Duration ` + "`json:\"timeout,omitempty\"`" + `
}

// {{.Kind}}Status is the observed state of a {{.Kind}}.
type {{.Kind}}Status struct {
	// +optional
	ObservedGeneration int64 ` + "`json:\"observedGeneration,omitempty\"`" + `
	// +optional
	Phase string ` + "`json:\"phase,omitempty\"`" + `
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition ` + "`json:\"conditions,omitempty\"`" + `
}

// {{.Kind}} is a synthetic kind.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=.status.phase
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
{{- if .Cluster}}
// +kubebuilder:resource:scope=Cluster
{{- end}}
type {{.Kind}} struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   {{.Kind}}Spec   ` + "`json:\"spec\"`" + `
	Status {{.Kind}}Status ` + "`json:\"status,omitempty\"`" + `
}

// {{.Kind}}List is a list of {{.Kind}}s.
// +kubebuilder:object:root=true
type {{.Kind}}List struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []{{.Kind}} ` + "`json:\"items\"`" + `
}
`))

// writeScaleTypes writes a synthetic API of n kinds into dir/apis: groups
// of kindsPerGroup kinds, one version each; every fifth kind is
// cluster-scoped.
func writeScaleTypes(dir string, n int) error {
	for g, group := range scaleGroups(n) {
		pkg := filepath.Join(dir, "apis", group, "v1")
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return err
		}
		var doc strings.Builder
		if err := scaleDoc.Execute(&doc, group); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pkg, "doc.go"), []byte(doc.String()), 0o644); err != nil {
			return err
		}
		for k := range min(kindsPerGroup, n-g*kindsPerGroup) {
			var src strings.Builder
			kind := fmt.Sprintf("Thing%c", 'A'+k)
			if err := scaleTypes.Execute(&src, struct {
				Kind    string
				Cluster bool
			}{kind, k == kindsPerGroup-1}); err != nil {
				return err
			}
			name := strings.ToLower(kind) + "_types.go"
			if err := os.WriteFile(filepath.Join(pkg, name), withGenclientTags([]byte(src.String())), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxRSS is the peak resident set of a finished process, in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024 // kilobytes on Linux
	}
	return 0
}

// parseKinds parses -kinds.
func parseKinds(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-kinds %q: want a comma-separated list of positive counts", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// runScale measures opgen and the conventional tools over synthetic APIs of
// each size in kinds: cold (fresh GOCACHE), warm (everything regenerated)
// and no-op (opgen's binary), wall time and peak RSS of the tools'
// processes (for the conventional chain, the largest of its five).
func runScale(bin, work string, sizes []int) error {
	fmt.Printf("\nopgen generate vs controller-gen + code-generator on synthetic APIs (%d kinds per group version), median of %d; peak RSS of the generator processes (conventional: the largest of its five)\n\n", kindsPerGroup, *runs)
	fmt.Printf("| kinds | measurement | conventional | opgen | speed-up | conventional peak RSS | opgen peak RSS |\n|---|---|---|---|---|---|---|\n")
	all := map[string][]float64{}
	for _, n := range sizes {
		conv := filepath.Join(work, fmt.Sprintf("scale-%d-conventional", n))
		og := filepath.Join(work, fmt.Sprintf("scale-%d-opgen", n))
		for _, dir := range []string{conv, og} {
			if err := writeScaleTypes(dir, n); err != nil {
				return err
			}
			if err := newModule(dir); err != nil {
				return err
			}
		}
		var inputs []string
		for _, g := range scaleGroups(n) {
			inputs = append(inputs, g+"/v1")
		}
		times := map[string][]time.Duration{}
		rss := map[string][]int64{}
		measure := func(name string, fresh bool, i int, f func(gocache string) (int64, error)) error {
			cache := ""
			if fresh {
				cache = filepath.Join(work, fmt.Sprintf("gocache-scale-%d-%d", n, i))
			}
			start := time.Now()
			peak, err := f(cache)
			if err != nil {
				return fmt.Errorf("%d kinds, %s: %w", n, name, err)
			}
			times[name] = append(times[name], time.Since(start))
			rss[name] = append(rss[name], peak)
			if cache != "" {
				_ = os.RemoveAll(cache)
			}
			return nil
		}
		convRun := func(cache string) (int64, error) { return runConventionalOn(bin, conv, cache, inputs) }
		ogRun := func(force bool) func(string) (int64, error) {
			return func(cache string) (int64, error) { return runOpgenRSS(bin, og, cache, force) }
		}
		if *noopOnly {
			if err := measure("opgen stamp", false, 0, ogRun(true)); err != nil {
				return err
			}
		}
		for i := range *runs {
			if *noopOnly {
				break
			}
			for _, m := range []struct {
				name  string
				fresh bool
				f     func(string) (int64, error)
			}{
				{"conventional cold", true, convRun}, {"opgen cold", true, ogRun(true)},
				{"conventional warm", false, convRun}, {"opgen warm", false, ogRun(true)},
			} {
				if err := measure(m.name, m.fresh, i, m.f); err != nil {
					return err
				}
			}
		}
		for i := range *runs {
			if err := measure("opgen no-op", false, i, ogRun(false)); err != nil {
				return err
			}
		}
		for name, ts := range times {
			for _, t := range ts {
				all[fmt.Sprintf("scale.%d.%s.seconds", n, name)] = append(all[fmt.Sprintf("scale.%d.%s.seconds", n, name)], t.Seconds())
			}
			for _, r := range rss[name] {
				all[fmt.Sprintf("scale.%d.%s.rssBytes", n, name)] = append(all[fmt.Sprintf("scale.%d.%s.rssBytes", n, name)], float64(r))
			}
		}
		mb := func(v []int64) string {
			s := slices.Clone(v)
			slices.Sort(s)
			return fmt.Sprintf("%d MB", s[len(s)/2]>>20)
		}
		for _, m := range []string{"cold", "warm"} {
			if *noopOnly {
				break
			}
			c, o := median(times["conventional "+m]), median(times["opgen "+m])
			fmt.Printf("| %d | %s | %s | %s | %.1fx | %s | %s |\n", n, m, round(c), round(o), float64(c)/float64(o), mb(rss["conventional "+m]), mb(rss["opgen "+m]))
		}
		noop := times["opgen no-op"]
		fmt.Printf("| %d | no-op (binary) | – | %s [%s–%s] | | | %s |\n", n, round(median(noop)), round(slices.Min(noop)), round(slices.Max(noop)), mb(rss["opgen no-op"]))
	}
	if *jsonOut != "" {
		return writeFloatJSON(*jsonOut+".scale.json", all)
	}
	return nil
}
