package monitoring

import "fmt"

// A row groups panels; a collapsed one is queried only when opened.
type row struct {
	title     string
	collapsed bool
	panels    []panel
}

// A panel is one time series graph, or a single stat.
type panel struct {
	title, description, unit string
	stat                     bool
	queries                  []query
}

// A query is PromQL with Grafana's variables ($job, $controller,
// $__rate_interval) and the legend of its series.
type query struct {
	expr, legend string
}

// Selectors of the dashboard's variables: the scrape job, and the
// controllers (the work queues are named after them).
const (
	job        = `job=~"$job"`
	controller = `job=~"$job", controller=~"$controller"`
	queue      = `job=~"$job", name=~"$controller"`
	rateWindow = "$__rate_interval"
)

func rate(metric, selector, by string) string {
	return fmt.Sprintf("sum by (%s) (rate(%s{%s}[%s]))", by, metric, selector, rateWindow)
}

func quantile(q float64, histogram, selector, by string) string {
	return fmt.Sprintf("histogram_quantile(%g, sum by (%s, le) (rate(%s_bucket{%s}[%s])))", q, by, histogram, selector, rateWindow)
}

func p50p99(histogram, selector, by, legend string) []query {
	return []query{
		{quantile(0.5, histogram, selector, by), legend + " p50"},
		{quantile(0.99, histogram, selector, by), legend + " p99"},
	}
}

// rows are the dashboard, top to bottom. webhooks adds the webhook row.
func rows(o Options) []row {
	out := []row{controllersRow(), queuesRow(o), apiRow(), leaderRow(), shardingRow()}
	if o.Webhooks {
		out = append(out, webhooksRow())
	}
	return append(out, fleetRow(), processRow())
}

func controllersRow() row {
	return row{title: "Controllers", panels: []panel{
		{title: "Actions handled", unit: "ops", description: "Actions per second, by controller and the verb the runtime chose (Add, Modify, Reconcile, Delete).",
			queries: []query{{rate("opgen_reconcile_total", controller, "controller, verb"), "{{controller}} {{verb}}"}}},
		{title: "Failed actions", unit: "ops", description: "Actions that returned an error. terminal=true ones are not retried.",
			queries: []query{{rate("opgen_reconcile_errors_total", controller, "controller, terminal"), "{{controller}} terminal={{terminal}}"}}},
		{title: "Action latency", unit: "s", description: "Time to run the whole pipeline for one action.",
			queries: p50p99("opgen_reconcile_duration_seconds", controller, "controller", "{{controller}}")},
		{title: "Timeouts", unit: "short", description: "Actions that ran past their controller's ActionTimeout; they are cancelled and retried.",
			queries: []query{{fmt.Sprintf("sum by (controller) (increase(opgen_reconcile_timeouts_total{%s}[%s]))", controller, rateWindow), "{{controller}}"}}},
		{title: "API writes", unit: "ops", description: "Writes by the pipeline's steps. A steady state writes nothing.",
			queries: []query{{rate("opgen_api_writes_total", controller, "controller, what"), "{{controller}} {{what}}"}}},
	}}
}

func queuesRow(o Options) row {
	return row{title: "Work queues", panels: []panel{
		{title: "Keys waiting", unit: "short", description: "Keys in the controller's queue, its three lanes together (finalizers first, then users' changes, then bulk work).",
			queries: []query{{fmt.Sprintf("sum by (name) (opgen_workqueue_depth{%s})", queue), "{{name}}"}}},
		{title: "Wait for a worker", unit: "s",
			queries: p50p99("opgen_workqueue_queue_duration_seconds", queue, "name", "{{name}}")},
		{title: "Longest running handler", unit: "s",
			description: fmt.Sprintf("The handler running longest, by controller. Past %s (ActionTimeout and its grace) it ignores its cancelled context: stuck.", short(o.stuckAfter())),
			queries:     []query{{fmt.Sprintf("max by (name) (opgen_workqueue_longest_running_processor_seconds{%s})", queue), "{{name}}"}}},
		{title: "Retries and adds", unit: "ops", description: "Keys added, and keys requeued after an error.",
			queries: []query{
				{rate("opgen_workqueue_adds_total", queue, "name"), "{{name}} added"},
				{rate("opgen_workqueue_retries_total", queue, "name"), "{{name}} retried"},
			}},
		{title: "Work in progress", unit: "s", description: "Seconds of work begun and not finished, summed over the workers.",
			queries: []query{{fmt.Sprintf("sum by (name) (opgen_workqueue_unfinished_work_seconds{%s})", queue), "{{name}}"}}},
		{title: "Time per key", unit: "s",
			queries: p50p99("opgen_workqueue_work_duration_seconds", queue, "name", "{{name}}")},
	}}
}

func apiRow() row {
	return row{title: "API server and watches", panels: []panel{
		{title: "Requests by code", unit: "reqps", description: "client-go's requests to the API server, by HTTP status code.",
			queries: []query{{rate("rest_client_requests_total", job, "code"), "{{code}}"}}},
		{title: "Request latency", unit: "s",
			queries: p50p99("rest_client_request_duration_seconds", job, "verb", "{{verb}}")},
		{title: "Client-side throttling", unit: "s", description: "Time requests waited for the client's rate limiter (--kube-api-qps, --kube-api-burst).",
			queries: []query{{quantile(0.99, "rest_client_rate_limiter_duration_seconds", job, "verb"), "{{verb}} p99"}}},
		{title: "Watch events", unit: "ops", description: "Watches opened, finished, timed out, failed and stopped. watch.failed that does not stop: the API server is unreachable or does not serve the kind.",
			queries: []query{{rate("opgen_watch_events_total", controller, "controller, kind, event"), "{{controller}} {{kind}} {{event}}"}}},
		{title: "Requests retried", unit: "reqps",
			queries: []query{{rate("rest_client_request_retries_total", job, "code, method"), "{{method}} {{code}}"}}},
	}}
}

func leaderRow() row {
	return row{title: "Leader election", panels: []panel{
		{title: "Leaders", stat: true, unit: "short", description: "Replicas that work (hold the Lease, or run without election). 0: nothing is handled.",
			queries: []query{{fmt.Sprintf("sum(opgen_leader{%s})", job), "leaders"}}},
		{title: "Leader by replica", unit: "short",
			queries: []query{{fmt.Sprintf("max by (instance) (opgen_leader{%s})", job), "{{instance}}"}}},
	}}
}

func shardingRow() row {
	return row{title: "Sharding (operators run with --sharding)", collapsed: true, panels: []panel{
		{title: "Members and buckets", unit: "short", description: "Live members as the leader's sharder sees them, and the buckets each member holds.",
			queries: []query{
				{fmt.Sprintf("max(opgen_shard_members{%s})", job), "members"},
				{fmt.Sprintf("max by (instance) (opgen_shard_buckets{%s})", job), "{{instance}} buckets"},
			}},
		{title: "Objects cached", unit: "short", description: "Objects of each controller's kind in each member's share, its cache.",
			queries: []query{{fmt.Sprintf("sum by (instance, controller) (opgen_shard_objects{%s})", controller), "{{instance}} {{controller}}"}}},
		{title: "Bucket moves", unit: "ops",
			queries: []query{{rate("opgen_shard_moves_total", job, "verb"), "{{verb}}"}}},
		{title: "Handover", unit: "s", description: "From a bucket's drain to its assignment to the next member.",
			queries: []query{{quantile(0.99, "opgen_shard_handover_seconds", job, "job"), "p99"}}},
	}}
}

func webhooksRow() row {
	return row{title: "Webhooks", panels: []panel{
		{title: "Requests by result", unit: "reqps",
			queries: []query{{rate("opgen_webhook_requests_total", job, "webhook, result"), "{{webhook}} {{result}}"}}},
		{title: "Latency", unit: "s", description: "Time to answer a webhook request, decoding and encoding included: the API server waits this long on each guarded write.",
			queries: p50p99("opgen_webhook_request_duration_seconds", job, "webhook", "{{webhook}}")},
		{title: "Rejections", unit: "reqps",
			queries: []query{{rate("opgen_webhook_rejections_total", job, "webhook, operation, code"), "{{webhook}} {{operation}} {{code}}"}}},
		{title: "Serving certificate expires in", stat: true, unit: "s", description: "The earliest expiry of the certificates the replicas serve.",
			queries: []query{{fmt.Sprintf("min(opgen_webhook_certificate_expiration_timestamp_seconds{%s}) - time()", job), "expires in"}}},
	}}
}

func fleetRow() row {
	return row{title: "Fleet (operators built with package fleet)", collapsed: true, panels: []panel{
		{title: "Clusters", unit: "short",
			queries: []query{
				{fmt.Sprintf("sum(opgen_fleet_cluster_engaged{%s})", job), "engaged"},
				{fmt.Sprintf("sum(opgen_fleet_cluster_ready{%s})", job), "ready"},
			}},
		{title: "Cluster failures", unit: "short", description: "Times a cluster's operator could not be built or stopped on its own.",
			queries: []query{{fmt.Sprintf("sum by (cluster) (increase(opgen_fleet_cluster_failures_total{%s}[%s]))", job, rateWindow), "{{cluster}}"}}},
		{title: "Time to engage a cluster", unit: "s",
			queries: []query{{quantile(0.99, "opgen_fleet_engage_seconds", job, "job"), "p99"}}},
	}}
}

func processRow() row {
	return row{title: "Process", panels: []panel{
		{title: "Memory", unit: "bytes",
			queries: []query{
				{fmt.Sprintf("max by (instance) (process_resident_memory_bytes{%s})", job), "{{instance}} resident"},
				{fmt.Sprintf("max by (instance) (go_memstats_heap_inuse_bytes{%s})", job), "{{instance}} heap in use"},
			}},
		{title: "CPU", unit: "percentunit",
			queries: []query{{rate("process_cpu_seconds_total", job, "instance"), "{{instance}}"}}},
		{title: "Goroutines", unit: "short",
			queries: []query{{fmt.Sprintf("max by (instance) (go_goroutines{%s})", job), "{{instance}}"}}},
	}}
}
