package promcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/monitoring"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{CRDDirs: []string{"testdata/crd", "../../test/testkit/testapi/crd"}})

func TestMain(m *testing.M) {
	plugins.RegisterDefaultPlugins() // the dashboard's query types, for unmarshalling
	env.Main(m)
}

// TestEveryMetricIsExported parses every expression of the dashboard and
// the alerts, with webhooks, and requires each metric it selects, and each
// label it matches on, in a scrape of two operators that use every
// feature the dashboard shows: one shards, serves a webhook and has
// handlers that fail, time out and write; a fleet has a member that fails;
// a request of client-go is retried.
func TestEveryMetricIsExported(t *testing.T) {
	ns := env.Namespace(t)
	exprs := expressions(t, monitoring.Options{Name: "promcheck", Namespace: ns, Webhooks: true})
	selectors := map[string][]*parser.VectorSelector{}
	for where, expr := range exprs {
		selectors[where] = parse(t, where, expr)
	}
	addrs := []string{shardingOperator(t, ns), fleetOperator(t, ns)}
	clientRetry(t)
	// Waits up to a minute for the series that appear with their first
	// event: a shard move, an engage, a retry.
	scraped := scrapeAll(t, addrs)
	for deadline := time.Now().Add(time.Minute); len(missing(selectors, scraped)) > 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		scraped = scrapeAll(t, addrs)
	}
	require.Empty(t, missing(selectors, scraped), "metrics the dashboard or the alerts name that the operators do not export (after a minute)")
	for where, list := range selectors {
		for _, vs := range list {
			labels := scraped[vs.Name]
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel || m.Name == "job" {
					continue // the scrape job's, which Prometheus adds
				}
				assert.Contains(t, labels, m.Name, "%s: %s has no label %q to match", where, vs.Name, m.Name)
			}
		}
	}
	t.Logf("%d expressions, %d metrics, all in the scrapes", len(exprs), len(names(selectors)))
}

// expressions are the PromQL of the dashboard's panels and variables and
// of the alerts, keyed by where they are.
func expressions(t *testing.T, opts monitoring.Options) map[string]string {
	t.Helper()
	data, err := monitoring.Dashboard(opts)
	require.NoError(t, err)
	var d dashboard.Dashboard
	require.NoError(t, json.Unmarshal(data, &d))
	out := map[string]string{}
	for _, p := range panels(d) {
		for i, target := range p.Targets {
			q, ok := target.(*prometheus.Dataquery)
			require.True(t, ok, "panel %q: %T is not a Prometheus query", *p.Title, target)
			out[fmt.Sprintf("panel %q query %d", *p.Title, i)] = q.Expr
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), (\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Query == nil || v.Query.Map == nil {
			continue
		}
		m := labelValues.FindStringSubmatch(fmt.Sprint(v.Query.Map["query"]))
		require.NotNil(t, m, "variable %s: a label_values query", v.Name)
		out["variable "+v.Name] = withMatcher(m[1], m[2]+`=~".+"`)
	}
	for _, r := range alerts(t, opts) {
		out["alert "+r.Alert] = r.Expr
		_, err := model.ParseDuration(r.For)
		assert.NoError(t, err, "alert %s: for %q", r.Alert, r.For)
	}
	return out
}

// withMatcher adds matcher to the selector sel, so that the label a
// label_values variable lists is checked like a matcher.
func withMatcher(sel, matcher string) string {
	if name, rest, ok := strings.Cut(sel, "{"); ok {
		return name + "{" + matcher + ", " + rest
	}
	return sel + "{" + matcher + "}"
}

func panels(d dashboard.Dashboard) []dashboard.Panel {
	var out []dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			out = append(out, *p.Panel)
		}
		if p.RowPanel != nil {
			out = append(out, p.RowPanel.Panels...)
		}
	}
	return out
}

type rule struct{ Alert, Expr, For string }

func alerts(t *testing.T, opts monitoring.Options) []rule {
	t.Helper()
	data, err := monitoring.Rules(opts)
	require.NoError(t, err)
	var doc struct {
		Spec struct{ Groups []struct{ Rules []rule } }
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Spec.Groups)
	return doc.Spec.Groups[0].Rules
}

// grafana replaces the dashboard's variables with values Prometheus
// parses, as Grafana does before it sends a query.
var grafana = strings.NewReplacer("$__rate_interval", "1m", "$job", "promcheck-metrics", "$controller", ".*")

// parse parses expr with Prometheus's parser and returns its selectors.
func parse(t *testing.T, where, expr string) []*parser.VectorSelector {
	t.Helper()
	node, err := parser.NewParser(parser.Options{}).ParseExpr(grafana.Replace(expr))
	require.NoError(t, err, "%s: %s", where, expr)
	var out []*parser.VectorSelector
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	require.NotEmpty(t, out, "%s selects no metric: %s", where, expr)
	return out
}

// series are the names of the scraped series (a histogram's _bucket,
// _sum and _count) with the names of their labels.
type series map[string][]string

func scrapeAll(t *testing.T, addrs []string) series {
	t.Helper()
	out := series{}
	for _, addr := range addrs {
		resp, err := http.Get("http://" + addr + "/metrics")
		require.NoError(t, err)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		require.NoError(t, err, "the scrape of %s", addr)
		for name, mf := range families {
			out.add(name, mf)
		}
	}
	return out
}

func (s series) add(name string, mf *dto.MetricFamily) {
	var labels []string
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName())
		}
	}
	names := []string{name}
	if mf.GetType() == dto.MetricType_HISTOGRAM {
		names = []string{name + "_bucket", name + "_sum", name + "_count"}
		labels = append(labels, "le")
	}
	for _, n := range names {
		s[n] = append(s[n], labels...)
	}
}

func names(selectors map[string][]*parser.VectorSelector) []string {
	var out []string
	for _, list := range selectors {
		for _, vs := range list {
			out = append(out, vs.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func missing(selectors map[string][]*parser.VectorSelector, scraped series) []string {
	var out []string
	for _, n := range names(selectors) {
		if _, ok := scraped[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}
