package manifest

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The operator's metrics, as the runtime serves them: over HTTPS to
// ServiceAccounts the API server authenticates and authorizes (the
// default), or over plain HTTP to anyone (MetricsInsecure).
//
// With secure metrics the operator is bound to <name>-metrics-auth, a
// ClusterRole of create on tokenreviews and subjectaccessreviews (apart
// from the controllers' ClusterRole, which is config/rbac's as opgen
// generate wrote it), and <name>-metrics-reader, a ClusterRole of get on
// /metrics, is written for the scraper's ServiceAccount to be bound to
// (Prometheus's, or anyone's: the manifest binds it to no one). These are
// kubebuilder's metrics_auth_role and metrics_reader_role. With the Deployment come a Service of the metrics
// port and, with ServiceMonitor, a monitoring.coreos.com/v1 ServiceMonitor
// for the Prometheus Operator.

// MetricsAuthRules are what the runtime's secure metrics (the default)
// need beside the controllers' rules: creating TokenReviews and
// SubjectAccessReviews to authenticate and authorize each scrape.
func MetricsAuthRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}
}

// MetricsReaderRole is the ClusterRole that lets who is bound to it
// scrape the operator's secure metrics: get on the non-resource URL
// /metrics.
func MetricsReaderRole(name string) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
}

// MetricsServiceSuffix names the metrics Service: <name>-metrics.
const MetricsServiceSuffix = "-metrics"

// metricsLabels select the metrics Service: the operator's name label and
// the metrics component, so that a ServiceMonitor selects no other
// Service.
func (o *builder) metricsLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": o.Name, "app.kubernetes.io/component": "metrics"}
}

// metricsScheme is the metrics port's protocol, the Service port's name.
func (o *builder) metricsScheme() string {
	if o.MetricsInsecure {
		return "http"
	}
	return "https"
}

func (o *builder) validateMetrics() error {
	if o.ServiceMonitor && o.Image == "" {
		return errors.New("manifest: a ServiceMonitor scrapes the operator's Deployment, which is left out without an image: pass --image, or drop --service-monitor")
	}
	return nil
}

// metricsArgs are the container's metrics flags.
func (o *builder) metricsArgs() []string {
	return []string{
		fmt.Sprintf("--metrics-bind-address=:%d", MetricsPort),
		fmt.Sprintf("--metrics-secure=%t", !o.MetricsInsecure),
	}
}

// metricsObjects returns the metrics objects, to write after the RBAC.
func (o *builder) metricsObjects() []any {
	var objects []any
	if !o.MetricsInsecure {
		auth := &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: o.meta(o.Name+"-metrics-auth", false),
			Rules:      MetricsAuthRules(),
		}
		reader := MetricsReaderRole(o.Name + "-metrics-reader")
		o.label(&reader.ObjectMeta)
		objects = append(objects, auth, o.clusterRoleBinding(auth.Name), &reader)
	}
	if o.Image == "" {
		return objects
	}
	objects = append(objects, o.metricsService())
	if o.ServiceMonitor {
		objects = append(objects, o.serviceMonitor())
	}
	return objects
}

// metricsService is written without the status a typed Service always
// carries (loadBalancer: {}).
func (o *builder) metricsService() map[string]any {
	meta := o.meta(o.Name+MetricsServiceSuffix, true)
	for k, v := range o.metricsLabels() {
		meta.Labels[k] = v
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": o.Name},
			Ports: []corev1.ServicePort{{
				Name: o.metricsScheme(), Port: MetricsPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(svc)
	if err != nil {
		panic(fmt.Sprintf("manifest: a Service does not convert: %v", err)) // cannot happen for a typed object
	}
	delete(m, "status")
	return m
}

// serviceMonitor is unstructured: the Prometheus Operator's Go types are
// not worth a dependency for one object. Prometheus scrapes with its own
// ServiceAccount's token, so bind that account to <name>-metrics-reader;
// the certificate is the operator's self-signed one, hence
// insecureSkipVerify (the token, not the certificate, is what is checked).
func (o *builder) serviceMonitor() map[string]any {
	meta := o.meta(o.Name+MetricsServiceSuffix, true)
	labels := map[string]any{}
	for k, v := range meta.Labels {
		labels[k] = v
	}
	selector := map[string]any{}
	for k, v := range o.metricsLabels() {
		selector[k] = v
	}
	endpoint := map[string]any{"port": o.metricsScheme(), "scheme": o.metricsScheme(), "path": "/metrics"}
	if !o.MetricsInsecure {
		endpoint["bearerTokenFile"] = "/var/run/secrets/kubernetes.io/serviceaccount/token"
		endpoint["tlsConfig"] = map[string]any{"insecureSkipVerify": true}
	}
	return map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "ServiceMonitor",
		"metadata":   map[string]any{"name": meta.Name, "namespace": meta.Namespace, "labels": labels},
		"spec": map[string]any{
			"endpoints": []any{endpoint},
			"selector":  map[string]any{"matchLabels": selector},
		},
	}
}
