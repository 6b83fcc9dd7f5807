package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

var conversions = flag.Int("conversions", 0, "instead of the fixture, a synthetic API of this many kinds, each in a hub version (v1) and a spoke (v1beta1) that names its hub with +k8s:conversion-gen and converts one field by hand: opgen generate (deepcopy, crd, conversion) against controller-gen and conversion-gen, warm, with the tools' peak RSS")

// The conversion row's targets: a project of about a dozen CRDs with
// conversions generates in this time and memory, warm.
const (
	conversionTargetSeconds = 5.0
	conversionTargetMiB     = 400
)

// writeConversionTypes writes n kinds in two versions into dir/apis: the
// synthetic kinds of the scale benchmark as the hub (v1, the storage
// version), and as a spoke (v1beta1) whose spec lacks the hub's Tier
// field, which a hand-written conversion drops, as projects' conversions
// do.
func writeConversionTypes(dir string, n int) error {
	if err := writeScaleTypes(dir, n); err != nil {
		return err
	}
	for _, group := range scaleGroups(n) {
		hub := filepath.Join(dir, "apis", group, "v1")
		spoke := filepath.Join(dir, "apis", group, "v1beta1")
		if err := os.MkdirAll(spoke, 0o755); err != nil {
			return err
		}
		entries, err := os.ReadDir(hub)
		if err != nil {
			return err
		}
		var conv strings.Builder
		fmt.Fprintf(&conv, "package v1beta1\n\nimport (\n\t\"k8s.io/apimachinery/pkg/conversion\"\n\n\tv1 %q\n)\n", module+"/apis/"+group+"/v1")
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(hub, e.Name()))
			if err != nil {
				return err
			}
			src := string(data)
			if e.Name() == "doc.go" {
				src = strings.Replace(src, "package v1", "// +k8s:conversion-gen="+module+"/apis/"+group+"/v1\npackage v1beta1", 1)
				if err := os.WriteFile(filepath.Join(spoke, e.Name()), []byte(src), 0o644); err != nil {
					return err
				}
				continue
			}
			kind := "Thing" + strings.ToUpper(strings.TrimPrefix(strings.TrimSuffix(e.Name(), "_types.go"), "thing"))
			// The hub is stored; the spoke lacks Tier.
			hubSrc := strings.Replace(src, "// +kubebuilder:object:root=true\n// +genclient", "// +kubebuilder:object:root=true\n// +kubebuilder:storageversion\n// +genclient", 1)
			if err := os.WriteFile(filepath.Join(hub, e.Name()), []byte(hubSrc), 0o644); err != nil {
				return err
			}
			spokeSrc := strings.Replace(src, "package v1\n", "package v1beta1\n", 1)
			spokeSrc = strings.Replace(spokeSrc, "\t// Tier is the service class.\n\t// +kubebuilder:validation:Enum=dev;staging;prod\n\t// +optional\n\tTier string `json:\"tier,omitempty\"`\n", "", 1)
			if err := os.WriteFile(filepath.Join(spoke, e.Name()), []byte(spokeSrc), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(&conv, "\n// Convert_v1_%[1]sSpec_To_v1beta1_%[1]sSpec drops Tier, which v1beta1 lacks.\nfunc Convert_v1_%[1]sSpec_To_v1beta1_%[1]sSpec(in *v1.%[1]sSpec, out *%[1]sSpec, s conversion.Scope) error {\n\treturn autoConvert_v1_%[1]sSpec_To_v1beta1_%[1]sSpec(in, out, s)\n}\n", kind)
		}
		if err := os.WriteFile(filepath.Join(spoke, "conversion.go"), []byte(conv.String()), 0o644); err != nil {
			return err
		}
		register := "package v1beta1\n\nimport \"k8s.io/apimachinery/pkg/runtime\"\n\nvar (\n\t// SchemeBuilder registers the spoke's conversions.\n\tSchemeBuilder      runtime.SchemeBuilder\n\tlocalSchemeBuilder = &SchemeBuilder\n)\n"
		if err := os.WriteFile(filepath.Join(spoke, "register.go"), []byte(register), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// runConversions measures opgen's and the conventional tools' generation
// of the deep copies, CRDs and conversions of a synthetic API of n kinds
// in two versions, warm (the GOCACHE of the user), and prints the row.
func runConversions(bin, work string, n int) error {
	conv := filepath.Join(work, "conversions-conventional")
	og := filepath.Join(work, "conversions-opgen")
	for _, dir := range []string{conv, og} {
		if err := writeConversionTypes(dir, n); err != nil {
			return err
		}
		if err := newModule(dir); err != nil {
			return err
		}
	}
	var spokes []string
	for _, g := range scaleGroups(n) {
		spokes = append(spokes, "./apis/"+g+"/v1beta1")
	}
	convRun := func() (int64, error) {
		var peak int64
		for _, s := range [][]string{
			{"controller-gen", "object", "crd", "paths=./...", "output:crd:artifacts:config=config/crd"},
			append([]string{"conversion-gen", "--output-file", "zz_generated.conversion.go", "--go-header-file", os.DevNull}, spokes...),
		} {
			rss, err := runInRSS(conv, "", nil, filepath.Join(bin, s[0]), s[1:]...)
			if err != nil {
				return 0, err
			}
			peak = max(peak, rss)
		}
		return peak, nil
	}
	ogRun := func() (int64, error) {
		return runInRSS(og, "", nil, filepath.Join(bin, "opgen"), "generate", "--force", "--only", "deepcopy,crd,conversion", "./...")
	}
	// A first run of each, not measured, fills the GOCACHE and writes the
	// conversions the spokes' code calls.
	if _, err := convRun(); err != nil {
		return fmt.Errorf("conventional: %w", err)
	}
	if _, err := ogRun(); err != nil {
		return fmt.Errorf("opgen: %w", err)
	}
	times := map[string][]time.Duration{}
	rss := map[string][]int64{}
	for range *runs {
		for _, m := range []struct {
			name string
			f    func() (int64, error)
		}{{"conventional", convRun}, {"opgen", ogRun}} {
			start := time.Now()
			peak, err := m.f()
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			times[m.name] = append(times[m.name], time.Since(start))
			rss[m.name] = append(rss[m.name], peak)
		}
	}
	medianRSS := func(v []int64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return float64(s[len(s)/2]) / (1 << 20)
	}
	convT, ogT := median(times["conventional"]), median(times["opgen"])
	ogMiB := medianRSS(rss["opgen"])
	met := "met"
	if ogT.Seconds() > conversionTargetSeconds || ogMiB > conversionTargetMiB {
		met = "missed"
	}
	fmt.Printf("\nconversions: %d kinds in two versions (%d CRDs, %d spokes with conversion-gen tags and hand-written functions), warm, median of %d\n\n", n, n, len(spokes), *runs)
	fmt.Println("| | conventional (controller-gen, conversion-gen) | opgen (deepcopy, crd, conversion) | target | |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| wall | %s | %s | ≤ %.0f s | %s |\n", round(convT), round(ogT), conversionTargetSeconds, met)
	fmt.Printf("| peak RSS | %.0f MiB | %.0f MiB | ≤ %d MiB | |\n", medianRSS(rss["conventional"]), ogMiB, conversionTargetMiB)
	if *jsonOut != "" {
		all := map[string][]float64{}
		for name, ts := range times {
			for i, t := range ts {
				all["conversions."+name+".seconds"] = append(all["conversions."+name+".seconds"], t.Seconds())
				all["conversions."+name+".rssBytes"] = append(all["conversions."+name+".rssBytes"], float64(rss[name][i]))
			}
		}
		return writeFloatJSON(*jsonOut, all)
	}
	return nil
}
