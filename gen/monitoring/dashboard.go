//lint:file-ignore SA1019 the classic dashboard model on purpose: see dashboardOf

package monitoring

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the dashboard's variable of the Prometheus to query.
var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// Dashboard returns the Grafana dashboard of the operator, as JSON.
func Dashboard(opts Options) ([]byte, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	d, err := dashboardOf(opts).Build()
	if err != nil {
		return nil, fmt.Errorf("monitoring: build the dashboard: %w", err)
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// UID is the dashboard's uid: stable, so that an import replaces the
// dashboard of an earlier version. Grafana allows 40 characters.
func UID(name string) string {
	uid := "opgen-" + name
	if len(uid) > 40 {
		uid = uid[:40]
	}
	return uid
}

// dashboardOf builds the dashboard in Grafana's classic JSON model. The
// SDK marks that package deprecated in favour of dashboardv2, Grafana 12's
// schema behind its new dashboard layouts; the classic model imports into
// every Grafana, from the UI, a file or a provisioning ConfigMap.
func dashboardOf(o Options) *dashboard.DashboardBuilder {
	b := dashboard.NewDashboardBuilder(o.Name).
		Uid(UID(o.Name)).
		Description("The "+o.Name+" operator: its controllers, work queues, API calls, leader and process. Written by opgen manifests --monitoring.").
		Tags([]string{"opgen", "kubernetes-operator"}).
		Refresh("30s").
		Time("now-3h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(labelVariable("job", "Job", "opgen_leader", o.Job, false)).
		WithVariable(labelVariable("controller", "Controller", `opgen_reconcile_total{job=~"$job"}`, "", true))
	ids := new(uint32)
	for _, r := range rows(o) {
		b = addRow(b, r, ids)
	}
	return b
}

// labelVariable is a variable of the values of a label of metric: one
// value, def by default, or any number, all by default.
func labelVariable(name, label, metric, def string, multi bool) *dashboard.QueryVariableBuilder {
	query := fmt.Sprintf("label_values(%s, %s)", metric, name)
	v := dashboard.NewQueryVariableBuilder(name).Label(label).
		Datasource(datasource).
		Query(dashboard.StringOrMap{Map: map[string]any{"query": query, "refId": name}}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
	if multi {
		return v.Multi(true).IncludeAll(true).AllValue(".*").
			Current(dashboard.VariableOption{Text: strOrArray("All"), Value: strOrArray("$__all")})
	}
	return v.Current(dashboard.VariableOption{Text: strOrArray(def), Value: strOrArray(def)})
}

func strOrArray(s string) dashboard.StringOrArrayOfString {
	return dashboard.StringOrArrayOfString{String: &s}
}

// addRow adds r and its panels: a collapsed row holds its panels, an open
// one is followed by them. Panels are numbered from ids on, as Grafana
// wants every panel to have an id of its own.
func addRow(b *dashboard.DashboardBuilder, r row, ids *uint32) *dashboard.DashboardBuilder {
	*ids++
	rb := dashboard.NewRowBuilder(r.title).Collapsed(r.collapsed).Id(*ids)
	if r.collapsed {
		for _, p := range r.panels {
			*ids++
			rb = rb.WithPanel(panelOf(p, *ids))
		}
		return b.WithRow(rb)
	}
	b = b.WithRow(rb)
	for _, p := range r.panels {
		*ids++
		b = b.WithPanel(panelOf(p, *ids))
	}
	return b
}

func panelOf(p panel, id uint32) cog.Builder[dashboard.Panel] {
	targets := make([]cog.Builder[variants.Dataquery], 0, len(p.queries))
	for i, q := range p.queries {
		targets = append(targets, prometheus.NewDataqueryBuilder().
			Expr(q.expr).LegendFormat(q.legend).RefId(string(rune('A'+i))).Datasource(datasource))
	}
	if p.stat {
		return stat.NewPanelBuilder().Id(id).Title(p.title).Description(p.description).Unit(p.unit).
			Datasource(datasource).Targets(targets).Height(6).Span(6)
	}
	return timeseries.NewPanelBuilder().Id(id).Title(p.title).Description(p.description).Unit(p.unit).
		Datasource(datasource).Targets(targets).Height(8).Span(8).Min(0).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}
