package manifest

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// The operator's Deployment: its Pod, container, probes and arguments.

func (o *builder) deployment() *appsv1.Deployment {
	selector := map[string]string{"app.kubernetes.io/name": o.Name}
	podMeta := o.meta("", false)
	podMeta.Name = ""
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: o.meta(o.Name, true),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(o.replicas()),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: podMeta,
				Spec: corev1.PodSpec{
					ServiceAccountName:            o.ServiceAccount,
					TerminationGracePeriodSeconds: ptr.To(o.gracePeriodSeconds()),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{o.container()},
				},
			},
		},
	}
	o.webhookContainer(&d.Spec.Template.Spec)
	return d
}

// replicas is Options.Replicas or its default: 2 with webhooks or
// sharding, else 1.
func (o *builder) replicas() int32 {
	switch {
	case o.Replicas > 0:
		return o.Replicas
	case o.wh.used(), o.Sharding:
		return 2
	}
	return 1
}

// gracePeriodSeconds is the shutdown timeout plus ShutdownMargin.
func (o *builder) gracePeriodSeconds() int64 {
	return int64((o.ShutdownTimeout + ShutdownMargin) / time.Second)
}

func (o *builder) container() corev1.Container {
	probe := func(path string, delay int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString("health"),
			}},
			InitialDelaySeconds: delay,
			PeriodSeconds:       10,
		}
	}
	return corev1.Container{
		Name:  "operator",
		Image: o.Image,
		Args:  o.args(),
		Env: []corev1.EnvVar{
			{Name: osenv.WatchNamespace, Value: o.WatchNamespace},
			{Name: osenv.PodNamespace, ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"},
			}},
		},
		Ports: []corev1.ContainerPort{
			{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
			{Name: "health", ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP},
		},
		Resources:      o.resources(),
		LivenessProbe:  probe("/healthz", 15),
		ReadinessProbe: probe("/readyz", 5),
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// args are the operator's arguments: the ports first, then the optional
// flags in a fixed order (the Helm chart's template follows it), then
// ExtraArgs.
func (o *builder) args() []string {
	args := append(o.metricsArgs(), fmt.Sprintf("--health-probe-bind-address=:%d", HealthPort))
	args = append(args, o.webhookArgs()...)
	if o.NoLeaderElection {
		args = append(args, "--leader-elect=false")
	}
	if o.LogFormat != "" {
		args = append(args, "--log-format="+o.LogFormat)
	}
	if o.Verbosity > 0 {
		args = append(args, fmt.Sprintf("-v=%d", o.Verbosity))
	}
	if o.ShutdownTimeout != DefaultShutdownTimeout {
		args = append(args, fmt.Sprintf("--shutdown-timeout=%ds", o.ShutdownTimeout/time.Second))
	}
	if o.Sharding {
		args = append(args, "--sharding")
	}
	return append(args, o.ExtraArgs...)
}

// DefaultResources are the container's requests and limits unless
// Options.Resources replaces them.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("500m"),
			corev1.ResourceMemory: resource.MustParse("256Mi"),
		},
	}
}

func (o *builder) resources() corev1.ResourceRequirements {
	r := DefaultResources()
	for name, q := range o.Resources.Requests {
		r.Requests[name] = q
	}
	for name, q := range o.Resources.Limits {
		r.Limits[name] = q
	}
	return r
}
