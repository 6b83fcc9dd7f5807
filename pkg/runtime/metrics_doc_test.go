package runtime_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestMetricsAreDocumented scrapes an operator that handled an object
// and compares the series with the table of docs/metrics.md: every
// series the operator exports is listed there, and every name listed is
// defined by a package of pkg/.
func TestMetricsAreDocumented(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Add", func() bool { return len(c.of("g")) > 0 })

	doc, err := os.ReadFile("../../docs/metrics.md")
	require.NoError(t, err)
	documented, prefixes := documentedMetrics(string(doc))
	require.Contains(t, documented, "opgen_reconcile_total", "the table of docs/metrics.md is read")

	families, err := h.op.Registry().Gather()
	require.NoError(t, err)
	var scraped []string
	for _, f := range families {
		scraped = append(scraped, f.GetName())
	}
	require.Contains(t, scraped, "opgen_workqueue_lane_depth")
	for _, name := range scraped {
		ok := documented[name]
		for _, p := range prefixes {
			ok = ok || strings.HasPrefix(name, p)
		}
		assert.True(t, ok, "the operator exports %s, which docs/metrics.md does not list", name)
	}

	var src strings.Builder
	require.NoError(t, filepath.WalkDir("../../pkg", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		src.Write(data)
		return err
	}))
	for name := range documented {
		if strings.HasPrefix(name, "opgen_") {
			assert.True(t, defined(src.String(), name), "docs/metrics.md lists %s, which no package of pkg/ defines", name)
		}
	}
}

// defined reports whether src names metric name as a string, whole or
// as a quoted prefix and a quoted rest ("opgen_workqueue_" + "depth").
func defined(src, name string) bool {
	if strings.Contains(src, `"`+name+`"`) {
		return true
	}
	for i := range len(name) {
		if name[i] == '_' && strings.Contains(src, `"`+name[:i+1]+`"`) && strings.Contains(src, `"`+name[i+1:]+`"`) {
			return true
		}
	}
	return false
}

// documentedMetrics reads the names in the first column of the metrics
// table: `name` cells, and `prefix_*` ones as prefixes.
func documentedMetrics(doc string) (map[string]bool, []string) {
	names := map[string]bool{}
	var prefixes []string
	cell := regexp.MustCompile("`([a-z_]+)(\\*?)`")
	for _, line := range strings.Split(doc, "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range cell.FindAllStringSubmatch(cols[1], -1) {
			if m[2] == "*" {
				prefixes = append(prefixes, m[1])
			} else {
				names[m[1]] = true
			}
		}
	}
	return names, prefixes
}
