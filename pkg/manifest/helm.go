package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/internal/osenv"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// DefaultChartDir is where opgen manifests --format helm writes the chart.
const DefaultChartDir = "deploy/chart"

// HelmHeader opens every file of the chart that opgen writes.
const HelmHeader = "# Written by opgen manifests --format helm (make manifests): rerun it to refresh,\n" +
	"# edits here are lost. Set values with --set or -f, not by editing the templates.\n"

// Helm returns a Helm chart of the manifest: its files, keyed by their path
// relative to the chart directory.
//
// The templates are the objects Build makes, with values in the places a
// deployment differs: the image, replicas, the shutdown timeout (and the
// grace period that follows it), resources, the ServiceAccount,
// the watched namespaces, leader election, sharding, extra arguments,
// the metrics port, the log format and verbosity, and whether the CRDs, the ServiceAccount and the
// Namespace are installed. The namespace is the release's (helm install
// -n). values.yaml holds Options' settings, so that `helm template` with
// the default values renders what Build writes, less the Namespace:
// createNamespace is false, since `helm install --create-namespace`
// creates it and a chart-owned Namespace would be deleted with the
// release.
func Helm(opts Options) (map[string][]byte, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	// The chart has every object whatever the options: the Deployment and
	// the metrics Service are rendered only when .Values.image is set, the
	// metrics RBAC when .Values.metrics.secure is, and so on.
	if err := b.loadWebhooks(); err != nil {
		return nil, err
	}
	all := *b
	if all.Image == "" {
		all.Image = "image"
	}
	all.MetricsInsecure, all.ServiceMonitor, all.Sharding = false, true, true
	objects, err := all.objects()
	if err != nil {
		return nil, err
	}
	values, err := b.helmValues()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"Chart.yaml":  b.chartYAML(),
		"values.yaml": values,
	}
	templates := map[string][][]byte{}
	for _, obj := range objects {
		doc, err := b.helmTemplate(obj)
		if err != nil {
			return nil, err
		}
		file := filepath.Join("templates", snake(doc.kind)+".yaml")
		templates[file] = append(templates[file], doc.text)
	}
	for file, docs := range templates {
		files[file] = append([]byte(HelmHeader), bytes.Join(docs, nil)...)
	}
	return files, nil
}

// WriteHelm writes the chart into dir and removes the templates an
// earlier run wrote that this one does not. It returns the paths it
// wrote, sorted.
func WriteHelm(opts Options, dir string) ([]string, error) {
	files, err := Helm(opts)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for rel := range files {
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	var written []string
	for _, rel := range paths {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, err
		}
		if err := osenv.WriteFileAtomic(p, files[rel], 0o644); err != nil {
			return written, fmt.Errorf("manifest: %w", err)
		}
		written = append(written, p)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "templates", "*.yaml"))
	for _, p := range old {
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[rel]; ok {
			continue
		}
		if data, err := os.ReadFile(p); err == nil && bytes.HasPrefix(data, []byte(HelmHeader)) {
			if err := os.Remove(p); err != nil {
				return written, fmt.Errorf("manifest: remove stale %s: %w", p, err)
			}
		}
	}
	return written, nil
}

func (o *builder) chartYAML() []byte {
	appVersion := "0.1.0"
	if tag := imageTag(o.Image); tag != "" {
		appVersion = tag
	}
	data, err := yaml.Marshal(map[string]any{
		"apiVersion":  "v2",
		"name":        o.Name,
		"description": "The " + o.Name + " Kubernetes operator, built with opgen",
		"type":        "application",
		"version":     "0.1.0",
		"appVersion":  appVersion,
	})
	if err != nil {
		panic(err) // strings always marshal
	}
	return append([]byte(HelmHeader), data...)
}

// helmValues is values.yaml: every value, commented, set to what Options
// says.
func (o *builder) helmValues() ([]byte, error) {
	res, err := yaml.Marshal(map[string]any{"resources": o.resources()})
	if err != nil {
		return nil, err
	}
	q := func(s string) string { // a YAML string, quoted as JSON is
		b, _ := yaml.Marshal(s)
		return strings.TrimSpace(string(b))
	}
	extraArgs := "[]"
	if len(o.ExtraArgs) > 0 {
		data, err := json.Marshal(o.ExtraArgs) // a YAML flow sequence
		if err != nil {
			return nil, err
		}
		extraArgs = string(data)
	}
	var b strings.Builder
	b.WriteString(HelmHeader)
	fmt.Fprintf(&b, `
# The operator's image; empty leaves the Deployment out (run the operator
# elsewhere against the same RBAC). A reference by digest, as opgen image
# prints it (registry/name:tag@sha256:...), runs exactly what was built.
image: %s
# Replicas of the Deployment; more than one stand by for leader election
# or, with sharding, each handle their share. With webhooks every replica
# serves them: keep two or more.
replicas: %d
# Spread the objects over the replicas, each caching and handling its
# share (--sharding; needs leaderElection). opgen help sharding.
sharding: %t
# More arguments of the operator, after those above, such as
# ["--workers=8", "--kube-api-qps=50"]; one of a flag set above wins.
extraArgs: %s
# How long in-flight handlers may run after SIGTERM (--shutdown-timeout);
# the Pod's grace period is this plus %d seconds.
shutdownTimeoutSeconds: %d
# Requests and limits of the operator's container.
%s
serviceAccount:
  # Install the ServiceAccount; false to bring your own.
  create: true
  # The ServiceAccount the operator runs as, which the RBAC binds.
  name: %s
# Install a Namespace object for the release namespace. Off, as helm
# install --create-namespace creates it and an object of the release would
# be deleted with it.
createNamespace: false
# Namespaces the operator watches: "all" or a comma-separated list.
watchNamespace: %s
# Elect a leader among the replicas with a Lease; false for one replica
# that need not wait for it.
leaderElection: %t
metrics:
  # Port of /metrics in the container (--metrics-bind-address).
  port: %d
  # Serve /metrics over HTTPS to the ServiceAccounts bound to the
  # <name>-metrics-reader ClusterRole (the API server checks their
  # tokens); false: plain HTTP to anyone.
  secure: %t
  # A Prometheus Operator ServiceMonitor of the metrics Service; the
  # cluster must serve monitoring.coreos.com/v1.
  serviceMonitor: %t
# The operator's --log-format, text or json; empty: the runtime's (text).
logFormat: %s
# The operator's -v: V(n) log lines up to n are written.
verbosity: %d
crds:
  # Install the CustomResourceDefinitions with the release.
  install: true
  # Keep them (and so every object of their kinds) when the release is
  # uninstalled (helm.sh/resource-policy: keep).
  keep: false
`, q(o.Image), o.replicas(), o.Sharding, extraArgs, ShutdownMargin/time.Second, o.ShutdownTimeout/time.Second, strings.TrimSpace(string(res)), q(o.ServiceAccount), q(o.WatchNamespace),
		!o.NoLeaderElection, MetricsPort, !o.MetricsInsecure, o.ServiceMonitor, q(o.LogFormat), o.Verbosity)
	return []byte(b.String()), nil
}

// helmDoc is one object of the chart, as template text.
type helmDoc struct {
	kind string
	text []byte
}

// A placeholder stands, in an object's map, for a template; after the map
// is written as YAML, the line that holds it is replaced by the template.
type placeholder struct {
	// inline replaces the placeholder itself on its line.
	inline string
	// block replaces the whole line: lead is the text before the key (its
	// indent and any "- "), indent the indent of the key's content.
	block func(key, lead, indent string) string
}

var placeholderLine = regexp.MustCompile(`(?m)^((\s*)(- )?)([^\s:]+): OPGENTPL(\d+)$`)

func (o *builder) helmTemplate(obj any) (helmDoc, error) {
	raw, err := marshal(obj)
	if err != nil {
		return helmDoc{}, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return helmDoc{}, err
	}
	kind, _ := m["kind"].(string)
	name, _ := m["metadata"].(map[string]any)["name"].(string)
	var holders []placeholder
	hold := func(p placeholder) string {
		holders = append(holders, p)
		return fmt.Sprintf("OPGENTPL%d", len(holders)-1)
	}
	o.templateObject(m, kind, hold)
	data, err := yaml.Marshal(m)
	if err != nil {
		return helmDoc{}, err
	}
	// Braces of the objects themselves (a CRD's description) are text.
	text := strings.ReplaceAll(string(data), "{{", `{{ "{{" }}`)
	text = placeholderLine.ReplaceAllStringFunc(text, func(line string) string {
		g := placeholderLine.FindStringSubmatch(line)
		var n int
		fmt.Sscan(g[5], &n)
		p := holders[n]
		if p.block != nil {
			indent := g[2]
			if g[3] != "" {
				indent += "  "
			}
			return p.block(g[4], g[1], indent)
		}
		return g[1] + g[4] + ": " + p.inline
	})
	text = "---\n" + text
	if cond := o.documentCondition(kind, name); cond != "" {
		text = "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
	}
	return helmDoc{kind: kind, text: []byte(text)}, nil
}

// documentCondition is the value that decides whether an object is
// installed at all.
func (o *builder) documentCondition(kind, name string) string {
	switch {
	case kind == "Namespace":
		return ".Values.createNamespace"
	case kind == "CustomResourceDefinition":
		return ".Values.crds.install"
	case kind == "ServiceAccount":
		return ".Values.serviceAccount.create"
	case kind == "Deployment", kind == "Service" && name == o.Name+MetricsServiceSuffix:
		return ".Values.image"
	case o.isWebhookObject(kind, name):
		return ".Values.image"
	case kind == "ServiceMonitor":
		return "and .Values.image .Values.metrics.serviceMonitor"
	case (kind == "ClusterRole" || kind == "ClusterRoleBinding") && name == o.Name+ShardingRoleSuffix:
		return ".Values.sharding"
	case kind == "ClusterRole" && (name == o.Name+"-metrics-reader" || name == o.Name+"-metrics-auth"),
		kind == "ClusterRoleBinding" && name == o.Name+"-metrics-auth":
		return ".Values.metrics.secure"
	}
	return ""
}

// templateObject puts placeholders in m where the chart's values go.
func (o *builder) templateObject(m map[string]any, kind string, hold func(placeholder) string) {
	meta, _ := m["metadata"].(map[string]any)
	releaseNS := placeholder{inline: "{{ .Release.Namespace }}"}
	saName := placeholder{inline: "{{ .Values.serviceAccount.name | quote }}"}
	if meta != nil {
		if meta["namespace"] == o.Namespace {
			meta["namespace"] = hold(releaseNS)
		}
		switch {
		case kind == "Namespace" && meta["name"] == o.Namespace:
			meta["name"] = hold(releaseNS)
		case kind == "ServiceAccount" && meta["name"] == o.ServiceAccount:
			meta["name"] = hold(saName)
		case kind == "CustomResourceDefinition":
			annotations, _ := meta["annotations"].(map[string]any)
			if annotations[injectCA] == o.certificateRef() {
				annotations[injectCA] = "{{ .Release.Namespace }}/" + hooks.SecretName(o.Name)
			}
			meta["annotations"] = hold(placeholder{block: keepAnnotation(annotations)})
		}
	}
	if subjects, ok := m["subjects"].([]any); ok {
		for _, s := range subjects {
			s := s.(map[string]any)
			if s["kind"] == "ServiceAccount" && s["name"] == o.ServiceAccount {
				s["name"] = hold(saName)
			}
			if s["namespace"] == o.Namespace {
				s["namespace"] = hold(releaseNS)
			}
		}
	}
	o.templateWebhook(m, kind, releaseNS, hold)
	switch kind {
	case "Deployment":
		o.templateDeployment(m, hold, saName)
	case "Service":
		for _, p := range m["spec"].(map[string]any)["ports"].([]any) {
			p := p.(map[string]any)
			if p["targetPort"] == "metrics" {
				p["name"] = hold(placeholder{inline: metricsScheme})
			}
		}
	case "ServiceMonitor":
		m["spec"].(map[string]any)["endpoints"] = hold(placeholder{block: serviceMonitorEndpoints})
	}
}

// metricsScheme is http or https as .Values.metrics.secure says: the
// metrics Service port's name and the ServiceMonitor's scheme.
const metricsScheme = `{{ ternary "https" "http" .Values.metrics.secure }}`

// serviceMonitorEndpoints is the ServiceMonitor's endpoint as metrics.go
// writes it, for either scheme.
func serviceMonitorEndpoints(key, lead, indent string) string {
	lines := []string{
		lead + key + ":",
		indent + "- path: /metrics",
		indent + "  port: " + metricsScheme,
		indent + "  scheme: " + metricsScheme,
		indent + "  {{- if .Values.metrics.secure }}",
		indent + "  bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
		indent + "  tlsConfig:",
		indent + "    insecureSkipVerify: true",
		indent + "  {{- end }}",
	}
	return strings.Join(lines, "\n")
}

func (o *builder) templateDeployment(m map[string]any, hold func(placeholder) string, saName placeholder) {
	spec := m["spec"].(map[string]any)
	spec["replicas"] = hold(placeholder{inline: "{{ .Values.replicas }}"})
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	pod["terminationGracePeriodSeconds"] = hold(placeholder{inline: fmt.Sprintf("{{ add .Values.shutdownTimeoutSeconds %d }}", ShutdownMargin/time.Second)})
	if pod["serviceAccountName"] == o.ServiceAccount {
		pod["serviceAccountName"] = hold(saName)
	}
	for _, c := range pod["containers"].([]any) {
		c := c.(map[string]any)
		if c["name"] != "operator" {
			continue
		}
		c["image"] = hold(placeholder{inline: "{{ .Values.image | quote }}"})
		c["resources"] = hold(placeholder{block: func(key, lead, indent string) string {
			return fmt.Sprintf("%s%s:\n%s{{- toYaml .Values.resources | nindent %d }}", lead, key, indent, len(indent)+2)
		}})
		c["args"] = hold(placeholder{block: o.argsTemplate})
		for _, e := range c["env"].([]any) {
			e := e.(map[string]any)
			if e["name"] == osenv.WatchNamespace {
				e["value"] = hold(placeholder{inline: "{{ .Values.watchNamespace | quote }}"})
			}
		}
		for _, p := range c["ports"].([]any) {
			p := p.(map[string]any)
			if p["name"] == "metrics" {
				p["containerPort"] = hold(placeholder{inline: "{{ .Values.metrics.port }}"})
			}
		}
	}
}

// argsTemplate writes the container's arguments as args() makes them: the
// fixed ones, then the optional ones in args()' order.
func (o *builder) argsTemplate(key, lead, indent string) string {
	fixed := (&builder{Options: Options{Name: o.Name, CertManager: o.CertManager, ShutdownTimeout: DefaultShutdownTimeout}, wh: o.wh}).args() // no optional flag set
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s:", lead, key)
	for _, a := range fixed {
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address=:"):
			a = "--metrics-bind-address=:{{ .Values.metrics.port }}"
		case strings.HasPrefix(a, "--metrics-secure="):
			a = "--metrics-secure={{ .Values.metrics.secure }}"
		}
		fmt.Fprintf(&b, "\n%s- %s", indent, a)
	}
	for _, opt := range []struct{ open, arg string }{
		{"if not .Values.leaderElection", "--leader-elect=false"},
		{"with .Values.logFormat", "--log-format={{ . }}"},
		{"with .Values.verbosity", "-v={{ . }}"},
		{fmt.Sprintf("if ne (int .Values.shutdownTimeoutSeconds) %d", DefaultShutdownTimeout/time.Second), "--shutdown-timeout={{ .Values.shutdownTimeoutSeconds }}s"},
		{"if .Values.sharding", "--sharding"},
		{"range .Values.extraArgs", "{{ . | quote }}"},
	} {
		fmt.Fprintf(&b, "\n%s{{- %s }}\n%s- %s\n%s{{- end }}", indent, opt.open, indent, opt.arg, indent)
	}
	return b.String()
}

// keepAnnotation writes a CRD's annotations with helm.sh/resource-policy:
// keep when .Values.crds.keep is set.
func keepAnnotation(annotations map[string]any) func(key, lead, indent string) string {
	return func(key, lead, indent string) string {
		keep := fmt.Sprintf("%s{{- if .Values.crds.keep }}\n%s  helm.sh/resource-policy: keep\n%s{{- end }}", indent, indent, indent)
		if len(annotations) == 0 {
			return fmt.Sprintf("%s{{- if .Values.crds.keep }}\n%s%s:\n%s  helm.sh/resource-policy: keep\n%s{{- end }}", indent, lead, key, indent, indent)
		}
		data, _ := yaml.Marshal(annotations)
		var b strings.Builder
		fmt.Fprintf(&b, "%s%s:\n", lead, key)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			fmt.Fprintf(&b, "%s  %s\n", indent, l)
		}
		b.WriteString(keep)
		return b.String()
	}
}
