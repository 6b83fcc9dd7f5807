package cli

import (
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/monitoring"
	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// ManifestsOptions are opgen manifests': the manifest's, and those that
// need parsing into them.
type ManifestsOptions struct {
	manifest.Options
	// Format is flat, kustomize or helm; Out where it goes (see Manifests).
	Format, Out string
	// Labels are k=v,k2=v2 for every object.
	Labels string
	// LeaderElect and MetricsSecure are the negations of
	// Options.NoLeaderElection and Options.MetricsInsecure.
	LeaderElect, MetricsSecure bool
	// Resources are the container's requests and limits, as quantities
	// ("" for the default).
	CPURequest, MemoryRequest, CPULimit, MemoryLimit string
	// Monitoring, when set, is the directory where the Grafana dashboard
	// and the PrometheusRule go (package monitoring).
	Monitoring string
}

// Manifests writes the operator's manifest in opts.Format: flat, to the
// file opts.Out or to w ("-" or ""); kustomize, into the config
// directory; helm, a chart in opts.Out (default manifest.DefaultChartDir).
// The kustomize and helm files written are listed on w.
func Manifests(opts ManifestsOptions, w io.Writer) error {
	if err := opts.parse(); err != nil {
		return err
	}
	if opts.Member && opts.Format != "flat" {
		return fmt.Errorf("--member writes one flat manifest: leave --format %s out", opts.Format)
	}
	if opts.Monitoring != "" {
		if err := writeMonitoring(opts, w); err != nil {
			return err
		}
	}
	switch opts.Format {
	case "flat":
		data, err := manifest.Build(opts.Options)
		if err != nil {
			return err
		}
		if opts.Out == "" {
			opts.Out = "-"
		}
		return writeOutput(w, opts.Out, data)
	case "kustomize":
		if opts.Out != "" {
			return fmt.Errorf("--format kustomize writes into --config-dir (%s), not --out: leave --out out", opts.ConfigDir)
		}
		return listWritten(w)(manifest.WriteKustomize(opts.Options))
	case "helm":
		if opts.Out == "" || opts.Out == "-" {
			opts.Out = manifest.DefaultChartDir
		}
		return listWritten(w)(manifest.WriteHelm(opts.Options, opts.Out))
	}
	return fmt.Errorf("--format %q: use flat, kustomize or helm", opts.Format)
}

// writeMonitoring writes the dashboard and the alerts of the operator
// into opts.Monitoring, with the webhook panels when it serves webhooks.
func writeMonitoring(opts ManifestsOptions, w io.Writer) error {
	if opts.Member {
		return errors.New("--monitoring: a member cluster runs no operator to watch: leave --monitoring out with --member")
	}
	webhooks, err := manifest.ServesWebhooks(opts.ConfigDir)
	if err != nil {
		return err
	}
	return listWritten(w)(monitoring.Write(opts.Monitoring, monitoring.Options{
		Name: opts.Name, Namespace: opts.Namespace, Webhooks: webhooks, Labels: opts.Options.Labels,
	}))
}

func listWritten(w io.Writer) func([]string, error) error {
	return func(written []string, err error) error {
		for _, p := range written {
			fmt.Fprintf(w, "wrote %s\n", p)
		}
		return err
	}
}

// parse parses the options that need it into Options and fills the
// defaults that come from the project.
func (o *ManifestsOptions) parse() error {
	var err error
	if o.Options.Labels, err = manifest.ParseLabels(o.Labels); err != nil {
		return err
	}
	o.NoLeaderElection = !o.LeaderElect
	o.MetricsInsecure = !o.MetricsSecure
	for _, r := range []struct {
		flag, value string
		list        *corev1.ResourceList
		name        corev1.ResourceName
	}{
		{"cpu-request", o.CPURequest, &o.Resources.Requests, corev1.ResourceCPU},
		{"memory-request", o.MemoryRequest, &o.Resources.Requests, corev1.ResourceMemory},
		{"cpu-limit", o.CPULimit, &o.Resources.Limits, corev1.ResourceCPU},
		{"memory-limit", o.MemoryLimit, &o.Resources.Limits, corev1.ResourceMemory},
	} {
		if r.value == "" {
			continue
		}
		q, err := resource.ParseQuantity(r.value)
		if err != nil {
			return fmt.Errorf("--%s %q: %w: write a quantity such as 100m, 1 or 128Mi", r.flag, r.value, err)
		}
		if *r.list == nil {
			*r.list = corev1.ResourceList{}
		}
		(*r.list)[r.name] = q
	}
	if o.Name == "" {
		if o.Name, err = gen.ProjectName("."); err != nil {
			return err
		}
	}
	if o.Namespace == "" {
		o.Namespace = o.Name + "-system"
	}
	return nil
}
