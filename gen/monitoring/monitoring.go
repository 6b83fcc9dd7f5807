package monitoring

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// Options say whose dashboard and alerts to write.
type Options struct {
	// Name of the operator. Required.
	Name string
	// Namespace of the PrometheusRule: the operator's. Required.
	Namespace string
	// Job is the scrape job of the operator's metrics. Default
	// <Name>-metrics: the metrics Service of `opgen manifests`, which a
	// ServiceMonitor uses as the job.
	Job string
	// Webhooks adds the webhook row and the certificate alert.
	Webhooks bool
	// ActionTimeout is the controllers' ActionTimeout, from which a
	// handler counts as stuck. Default 10 minutes, the runtime's.
	ActionTimeout time.Duration
	// Labels are added to the PrometheusRule's, for a Prometheus that
	// selects rules by label (kube-prometheus-stack: release=NAME).
	Labels map[string]string
}

// DefaultActionTimeout is the runtime's ControllerOptions.ActionTimeout
// default.
const DefaultActionTimeout = 10 * time.Minute

func (o *Options) validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("monitoring: the operator name is empty: pass --name"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("monitoring: the namespace is empty: pass --namespace"))
	}
	if o.Job == "" {
		o.Job = o.Name + "-metrics"
	}
	if o.ActionTimeout == 0 {
		o.ActionTimeout = DefaultActionTimeout
	}
	return errors.Join(errs...)
}

// stuckAfter is how long a handler runs before the runtime calls it
// stuck: the action timeout, then a tenth of it (at least a second) in
// which the handler should have returned.
func (o Options) stuckAfter() time.Duration {
	return o.ActionTimeout + max(o.ActionTimeout/10, time.Second)
}

// short writes d without its zero tails: 11m, not 11m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Files of Write, in the directory it is given.
func dashboardFile(name string) string { return name + "-dashboard.json" }
func rulesFile(name string) string     { return name + "-prometheusrule.yaml" }

// Write writes the dashboard and the PrometheusRule into dir and returns
// their paths.
func Write(dir string, opts Options) ([]string, error) {
	dash, err := Dashboard(opts)
	if err != nil {
		return nil, err
	}
	rules, err := Rules(opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range []struct {
		name string
		data []byte
	}{{dashboardFile(opts.Name), dash}, {rulesFile(opts.Name), rules}} {
		p := filepath.Join(dir, f.name)
		if err := osenv.WriteFileAtomic(p, f.data, 0o644); err != nil {
			return written, fmt.Errorf("monitoring: %w", err)
		}
		written = append(written, p)
	}
	return written, nil
}
