package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// Webhooks
//
// An operator serves webhooks when a kind has an admission webhook
// (+opgen:webhook markers: opgen generate writes their configurations to
// config/webhook/manifests.yaml) or when a CRD under config/crd converts
// through the conversion webhook (conversion strategy Webhook). The
// manifest then has, with the Deployment:
//
//   - the webhook Service <name>-webhook, port 443 to the container's
//     webhook port (hooks.Port), and the container's
//     --webhook-bind-address=:<port>;
//   - two replicas unless Options.Replicas says otherwise, and a
//     PodDisruptionBudget <name> (maxUnavailable 1): every replica serves
//     the webhooks, so a restart or a drain leaves one answering;
//   - the Validating and MutatingWebhookConfigurations, built by
//     hooks.Configurations for the operator's name and namespace, reaching
//     the Service;
//   - the RBAC of the runtime's certificate management (certs.Managed): a
//     Role on its Secret <name>-webhook-cert (create; get and update by
//     name), and a ClusterRole to keep caBundle current (get and patch on
//     its two configurations and on the CRDs it converts, by name);
//   - the ClusterRole <name>-webhook-configurations: get on the two
//     configurations by name, for the runtime's check that they call only
//     webhooks it serves (with cert-manager too).
//
// With CertManager, cert-manager issues the certificate instead: a
// self-signed Issuer and a Certificate whose Secret is mounted into the
// container (--webhook-cert-dir), the cert-manager.io/inject-ca-from
// annotation on the configurations and the converted CRDs, and no
// certificate RBAC.
//
// Without an image there is no Deployment and none of this: the operator
// run outside the cluster (make run) registers its webhooks itself, at
// its local address.

// WebhookDir is the directory of config/ where opgen generate writes
// WebhookFile, and where the kustomize layout puts the webhook objects.
const WebhookDir = "webhook"

// WebhookFile holds the admission webhook configurations opgen generate
// writes, for the operator's default namespace (<name>-system).
const WebhookFile = "manifests.yaml"

// WebhookCertDir is where the container mounts the certificate
// cert-manager issues.
const WebhookCertDir = "/tmp/k8s-webhook-server/serving-certs"

// injectCA is cert-manager's CA injector annotation.
const injectCA = "cert-manager.io/inject-ca-from"

// webhooks is what the manifest serves: the admission hooks read from
// config/webhook and the names of the CRDs converted by the webhook.
type webhooks struct {
	hooks     []hooks.Hook
	converted []string
}

func (w webhooks) used() bool { return len(w.hooks) > 0 || len(w.converted) > 0 }

// WebhookConfigurations returns the configurations of hs for the operator
// name in namespace, reaching its webhook Service; nil ones are left out.
func WebhookConfigurations(name, namespace string, hs []hooks.Hook) []any {
	v, m := hooks.Configurations(name, namespace, hs, hooks.ServiceClientConfig(name, namespace, nil))
	var out []any
	if v != nil {
		out = append(out, v)
	}
	if m != nil {
		out = append(out, m)
	}
	return out
}

// MarshalDocuments writes objects as multi-document YAML, as Build does.
func MarshalDocuments(objects []any) ([]byte, error) {
	var out bytes.Buffer
	for i, obj := range objects {
		doc, err := marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(doc)
	}
	return out.Bytes(), nil
}

// readWebhooks reads the admission hooks from config/webhook/manifests.yaml
// (none when it is missing) and the converted CRDs from crds.
func readWebhooks(configDir string, crds []map[string]any) (webhooks, error) {
	var w webhooks
	for _, crd := range crds {
		spec, _ := crd["spec"].(map[string]any)
		conv, _ := spec["conversion"].(map[string]any)
		if conv["strategy"] == "Webhook" {
			name, _ := crd["metadata"].(map[string]any)["name"].(string)
			w.converted = append(w.converted, name)
		}
	}
	slices.Sort(w.converted)
	path := filepath.Join(configDir, WebhookDir, WebhookFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return w, nil
	}
	if err != nil {
		return w, fmt.Errorf("manifest: %w", err)
	}
	for i, doc := range bytes.Split(data, []byte("\n---")) {
		hs, err := hooksOf(doc)
		if err != nil {
			return w, fmt.Errorf("manifest: %s: document %d: %w; run `go generate ./...` to write it again", path, i+1, err)
		}
		w.hooks = append(w.hooks, hs...)
	}
	return w, nil
}

// hooksOf returns the hooks of one configuration document. A hook's name
// (v<kind>.<group>) and path give back its kind in lower case, which is
// all a Hook's names and paths use; DELETE among its operations gives
// back Delete.
func hooksOf(doc []byte) ([]hooks.Hook, error) {
	var typed struct {
		Kind     string `json:"kind"`
		Webhooks []struct {
			Name  string                                       `json:"name"`
			Rules []admissionregistrationv1.RuleWithOperations `json:"rules"`
		} `json:"webhooks"`
	}
	if err := yaml.Unmarshal(doc, &typed); err != nil {
		return nil, err
	}
	ht := hooks.Validating
	switch typed.Kind {
	case "ValidatingWebhookConfiguration":
	case "MutatingWebhookConfiguration":
		ht = hooks.Mutating
	case "":
		return nil, nil
	default:
		return nil, fmt.Errorf("unexpected kind %s", typed.Kind)
	}
	var out []hooks.Hook
	for _, w := range typed.Webhooks {
		if len(w.Rules) != 1 || len(w.Rules[0].APIGroups) != 1 || len(w.Rules[0].APIVersions) != 1 || len(w.Rules[0].Resources) != 1 {
			return nil, fmt.Errorf("webhook %s does not have the one rule opgen writes", w.Name)
		}
		r := w.Rules[0]
		kind, ok := strings.CutSuffix(w.Name, "."+r.APIGroups[0])
		if !ok || len(kind) < 2 {
			return nil, fmt.Errorf("webhook %s is not named <v|m><kind>.%s", w.Name, r.APIGroups[0])
		}
		out = append(out, hooks.Hook{
			Type:       ht,
			GVK:        schema.GroupVersionKind{Group: r.APIGroups[0], Version: r.APIVersions[0], Kind: kind[1:]},
			Resource:   r.Resources[0],
			Namespaced: r.Scope != nil && *r.Scope == admissionregistrationv1.NamespacedScope,
			Delete:     slices.Contains(r.Operations, admissionregistrationv1.Delete),
		})
	}
	return out, nil
}

// webhookArgs are the container's webhook arguments.
func (o *builder) webhookArgs() []string {
	if !o.wh.used() {
		return nil
	}
	args := []string{fmt.Sprintf("--webhook-bind-address=:%d", hooks.Port)}
	if o.CertManager {
		args = append(args, "--webhook-cert-dir="+WebhookCertDir)
	}
	return args
}

// webhookContainer adds the webhook port, and the certificate volume
// with cert-manager, to the operator's container and pod.
func (o *builder) webhookContainer(pod *corev1.PodSpec) {
	if !o.wh.used() {
		return
	}
	c := &pod.Containers[0]
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: "webhook", ContainerPort: hooks.Port, Protocol: corev1.ProtocolTCP})
	if !o.CertManager {
		return
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "webhook-cert", MountPath: WebhookCertDir, ReadOnly: true})
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "webhook-cert", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: hooks.SecretName(o.Name)},
	}})
}

// webhookObjects are the objects of the webhooks, without the Deployment.
func (o *builder) webhookObjects() []any {
	if !o.wh.used() {
		return nil
	}
	if o.Image == "" {
		return o.localWebhookRBAC()
	}
	var out []any
	if o.CertManager {
		out = append(out, o.certManagerObjects()...)
	} else {
		out = append(out, o.webhookRBAC()...)
	}
	out = append(out, o.configurationsRBAC()...)
	out = append(out, o.webhookService(), o.podDisruptionBudget())
	for _, c := range WebhookConfigurations(o.Name, o.Namespace, o.wh.hooks) {
		switch c := c.(type) {
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			o.webhookMeta(&c.ObjectMeta)
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			o.webhookMeta(&c.ObjectMeta)
		}
		out = append(out, c)
	}
	return out
}

// webhookMeta labels a configuration and, with cert-manager, asks for its
// CA.
func (o *builder) webhookMeta(m *metav1.ObjectMeta) {
	o.label(m)
	if o.CertManager {
		m.Annotations = map[string]string{injectCA: o.certificateRef()}
	}
}

// certificateRef is the namespace/name of cert-manager's Certificate.
func (o *builder) certificateRef() string { return o.Namespace + "/" + hooks.SecretName(o.Name) }

// webhookCRD points a converted CRD's conversion webhook at the
// operator's webhook Service in its namespace and, with cert-manager,
// asks for the CA to be injected.
func (o *builder) webhookCRD(crd map[string]any) {
	if patch := o.crdPatch(crd); patch != nil {
		mergeMaps(crd, patch)
	}
}

// crdPatch is what webhookCRD changes in crd, as a merge patch: nil when
// nothing.
func (o *builder) crdPatch(crd map[string]any) map[string]any {
	name, _ := crd["metadata"].(map[string]any)["name"].(string)
	if !slices.Contains(o.wh.converted, name) {
		return nil
	}
	if o.Image == "" {
		// No Service to reach: the operator, run locally, writes the
		// stanza with its own URL when it starts (a URL beside a Service
		// would be refused). The manifest leaves it out rather than set
		// it to None: applied again while the operator runs (make
		// install after a change of the types), it would conflict with
		// the operator's stanza, or, forced, cut the conversions.
		return map[string]any{"apiVersion": crd["apiVersion"], "kind": crd["kind"], "metadata": map[string]any{"name": name},
			"spec": map[string]any{"conversion": nil}}
	}
	meta := map[string]any{"name": name}
	if o.CertManager {
		meta["annotations"] = map[string]any{injectCA: o.certificateRef()}
	}
	patch := map[string]any{"apiVersion": crd["apiVersion"], "kind": crd["kind"], "metadata": meta}
	spec, _ := crd["spec"].(map[string]any)
	conv, _ := spec["conversion"].(map[string]any)
	wh, _ := conv["webhook"].(map[string]any)
	cc, _ := wh["clientConfig"].(map[string]any)
	if _, ok := cc["service"].(map[string]any); ok {
		patch["spec"] = map[string]any{"conversion": map[string]any{"webhook": map[string]any{"clientConfig": map[string]any{
			"service": map[string]any{"name": hooks.ServiceName(o.Name), "namespace": o.Namespace},
		}}}}
	}
	return patch
}

// mergeMaps merges patch into m, map by map, as a JSON merge patch: a nil
// value removes the key.
func mergeMaps(m, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(m, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			if mm, ok := m[k].(map[string]any); ok {
				mergeMaps(mm, pm)
				continue
			}
		}
		m[k] = v
	}
}

// crdPatches are the kustomize patches that make the CRDs read from
// config/crd what webhookCRD makes them in Build.
func (o *builder) crdPatches() ([]any, error) {
	crds, err := readCRDs(filepath.Join(o.ConfigDir, "crd"))
	if err != nil {
		return nil, err
	}
	var out []any
	for _, crd := range crds {
		if patch := o.crdPatch(crd); patch != nil {
			data, err := yaml.Marshal(patch)
			if err != nil {
				return nil, err
			}
			out = append(out, map[string]any{"patch": string(data)})
		}
	}
	return out, nil
}

// podDisruptionBudget lets a voluntary disruption (a node drain, a
// cluster upgrade) take at most one of the operator's Pods at a time, so
// that with the default two replicas one serves the webhooks throughout.
// maxUnavailable, not minAvailable: with one replica a drain still
// proceeds. It is written without the zero status a typed one carries.
func (o *builder) podDisruptionBudget() map[string]any {
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: o.meta(o.Name, true),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": o.Name}},
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pdb)
	if err != nil {
		panic(fmt.Sprintf("manifest: a PodDisruptionBudget does not convert: %v", err)) // cannot happen for a typed object
	}
	delete(m, "status")
	return m
}

func (o *builder) webhookService() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: o.meta(hooks.ServiceName(o.Name), true),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": o.Name},
			Ports: []corev1.ServicePort{{
				Name: "webhook", Port: 443, TargetPort: intstr.FromString("webhook"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// configurationsRBAC lets the runtime read the operator's two webhook
// configurations by name, whether the manifest has them or not: every
// replica checks that they call only webhooks it serves, and is not
// ready while one calls a webhook it does not (pkg/webhook).
func (o *builder) configurationsRBAC() []any {
	name := o.Name + "-webhook-configurations"
	cluster := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: o.meta(name, false),
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			ResourceNames: []string{hooks.ValidatingConfigurationName(o.Name), hooks.MutatingConfigurationName(o.Name)}, Verbs: []string{"get"},
		}},
	}
	return []any{cluster, o.clusterRoleBinding(name)}
}

// loadWebhooks reads the webhooks the operator serves into o.
func (o *builder) loadWebhooks() error {
	crds, err := readCRDs(filepath.Join(o.ConfigDir, "crd"))
	if err != nil {
		return err
	}
	o.wh, err = readWebhooks(o.ConfigDir, crds)
	return err
}

// isWebhookObject reports whether the object of kind named name is one of
// the webhooks' (which come with the Deployment, and go to the kustomize
// layout's webhook directory).
func (o *builder) isWebhookObject(kind, name string) bool {
	switch kind {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Issuer", "Certificate", "PodDisruptionBudget":
		return true
	case "Service":
		return name == hooks.ServiceName(o.Name)
	case "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
		return name == o.Name+"-webhook-cert" || name == o.Name+"-webhook-local" || name == o.Name+"-webhook-configurations"
	}
	return false
}

// templateWebhook puts the release's namespace in the places of a webhook
// object that name the operator's namespace.
func (o *builder) templateWebhook(m map[string]any, kind string, releaseNS placeholder, hold func(placeholder) string) {
	ns := "{{ .Release.Namespace }}"
	if meta, ok := m["metadata"].(map[string]any); ok {
		if a, ok := meta["annotations"].(map[string]any); ok && a[injectCA] == o.certificateRef() {
			a[injectCA] = hold(placeholder{inline: ns + "/" + hooks.SecretName(o.Name)})
		}
	}
	switch kind {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		for _, w := range m["webhooks"].([]any) {
			w := w.(map[string]any)
			if svc, ok := w["clientConfig"].(map[string]any)["service"].(map[string]any); ok && svc["namespace"] == o.Namespace {
				svc["namespace"] = hold(releaseNS)
			}
			sel, _ := w["namespaceSelector"].(map[string]any)
			exprs, _ := sel["matchExpressions"].([]any)
			for _, e := range exprs {
				e := e.(map[string]any)
				if values, _ := e["values"].([]any); len(values) == 1 && values[0] == o.Namespace {
					e["values"] = hold(placeholder{block: listBlock(ns)})
				}
			}
		}
	case "CustomResourceDefinition":
		spec, _ := m["spec"].(map[string]any)
		conv, _ := spec["conversion"].(map[string]any)
		wh, _ := conv["webhook"].(map[string]any)
		cc, _ := wh["clientConfig"].(map[string]any)
		if svc, ok := cc["service"].(map[string]any); ok && svc["namespace"] == o.Namespace {
			svc["namespace"] = hold(releaseNS)
		}
	case "Certificate":
		spec := m["spec"].(map[string]any)
		var names []string
		for _, n := range spec["dnsNames"].([]any) {
			names = append(names, strings.Replace(n.(string), "."+o.Namespace+".svc", "."+ns+".svc", 1))
		}
		spec["dnsNames"] = hold(placeholder{block: listBlock(names...)})
	}
}

// listBlock writes a YAML list of items under the placeholder's key.
func listBlock(items ...string) func(key, lead, indent string) string {
	return func(key, lead, indent string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s%s:", lead, key)
		for _, it := range items {
			fmt.Fprintf(&b, "\n%s- %s", indent, it)
		}
		return b.String()
	}
}
