package optest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// InstallOptions name the operator Install installs.
type InstallOptions struct {
	// Name is the operator's name, as in its generated RBAC.
	Name string
	// Namespace holds its ServiceAccount; default Name + "-system".
	Namespace string
	// ConfigDir holds crd/ and rbac/; default "config".
	ConfigDir string
}

// Operator is an operator installed in a cluster.
type Operator struct {
	// Name is the operator's name, as in its generated RBAC.
	Name string
	// Namespace holds its ServiceAccount and Lease.
	Namespace string
	// Config authenticates as its ServiceAccount with a real token, so the
	// API server applies exactly the RBAC rules the manifest binds to it.
	Config *rest.Config
	// Manifest is the applied manifest (without a Deployment).
	Manifest []byte

	// running is the operator Start runs, until stop.
	running atomic.Pointer[runtime.Operator]
}

// Install builds the manifest `opgen manifests` builds from the config
// directory, without a Deployment, applies it server-side with admin,
// waits until its CRDs are served and returns the operator with a config
// for its ServiceAccount.
func Install(ctx context.Context, admin *rest.Config, opts InstallOptions) (*Operator, error) {
	if opts.Namespace == "" {
		opts.Namespace = opts.Name + "-system"
	}
	if opts.ConfigDir == "" {
		opts.ConfigDir = "config"
	}
	op := &Operator{Name: opts.Name, Namespace: opts.Namespace}
	data, err := manifest.Build(manifest.Options{Name: opts.Name, Namespace: opts.Namespace, ConfigDir: opts.ConfigDir})
	if err != nil {
		return nil, err
	}
	op.Manifest = data
	if err := Apply(ctx, admin, data); err != nil {
		return nil, fmt.Errorf("apply the %s manifest: %w", opts.Name, err)
	}
	op.Config, err = ServiceAccountConfig(ctx, admin, opts.Namespace, opts.Name)
	return op, err
}

// Apply applies every object of the YAML manifest with server-side apply
// (field manager "optest", conflicts forced) and waits until the
// CustomResourceDefinitions among them are established.
func Apply(ctx context.Context, admin *rest.Config, manifestYAML []byte) error {
	crds, err := apply(ctx, admin, manifestYAML, nil)
	if err != nil {
		return err
	}
	return waitEstablished(ctx, admin, crds)
}

// DryRun applies the manifest file at path with a server-side dry run: the
// API server checks every object against its schema and admission and
// stores nothing. It returns one line per object, such as
// "deployment.apps/hello-operator (server dry run)".
func DryRun(ctx context.Context, admin *rest.Config, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	_, err = apply(ctx, admin, data, &out)
	return out.String(), err
}

// apply applies the objects of manifestYAML and returns the names of the
// CRDs among them; with dryRun set it only asks the server to check them,
// and reports each in dryRun.
func apply(ctx context.Context, admin *rest.Config, manifestYAML []byte, dryRun io.Writer) ([]string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(admin)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	var crds []string
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifestYAML), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
		}
		body, err := u.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		if gvk.Kind == "CustomResourceDefinition" && dryRun == nil {
			if err := clearConversionWebhook(ctx, ri, &u); err != nil {
				return nil, err
			}
		}
		force := true
		po := metav1.PatchOptions{FieldManager: "optest", Force: &force}
		if dryRun != nil {
			po.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, po); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", gvk.Kind, u.GetName(), err)
		}
		if dryRun != nil {
			res := strings.ToLower(gvk.Kind)
			if gvk.Group != "" {
				res += "." + gvk.Group
			}
			fmt.Fprintf(dryRun, "%s/%s (server dry run)\n", res, u.GetName())
		}
		if gvk.Kind == "CustomResourceDefinition" {
			crds = append(crds, u.GetName())
		}
	}
	return crds, nil
}

// clearConversionWebhook removes the webhook of an installed CRD's
// conversion stanza when the manifest converts without one: a test
// process's operator points it at its own 127.0.0.1 URL (local mode) under
// its own field manager, which an apply of strategy None would merge with
// and the API server would refuse.
func clearConversionWebhook(ctx context.Context, ri dynamic.ResourceInterface, crd *unstructured.Unstructured) error {
	if _, found, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook"); found {
		return nil
	}
	strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
	if strategy == "" {
		strategy = "None"
	}
	patch := fmt.Sprintf(`{"spec":{"conversion":{"strategy":%q,"webhook":null}}}`, strategy)
	if _, err := ri.Patch(ctx, crd.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "optest"}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reset the conversion of CustomResourceDefinition %s: %w", crd.GetName(), err)
	}
	return nil
}

func waitEstablished(ctx context.Context, admin *rest.Config, names []string) error {
	if len(names) == 0 {
		return nil
	}
	ac, err := apiextensionsclient.NewForConfig(admin)
	if err != nil {
		return err
	}
	for _, name := range names {
		var last string
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, WaitTimeout, true, func(ctx context.Context) (bool, error) {
			crd, err := ac.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
				if c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse {
					last = c.Message
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established: %w %s", name, err, last)
		}
	}
	return nil
}

// ServiceAccountConfig returns a config that authenticates as the service
// account namespace/name with a token from the TokenRequest API, so the API
// server applies exactly the RBAC rules bound to that account. The account
// is created when missing.
func ServiceAccountConfig(ctx context.Context, admin *rest.Config, namespace, name string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create service account %s/%s: %w", namespace, name, err)
	}
	expiry := int64(24 * 60 * 60)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request a token for %s/%s: %w", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// Options returns runtime options for running the operator in a test: its
// name, leader election in its namespace with short timings, no servers.
func (o *Operator) Options(log logr.Logger) runtime.Options {
	return runtime.Options{
		Name:        o.Name,
		MetricsAddr: "0",
		HealthAddr:  "0",
		Logger:      log,
		LeaderElection: runtime.LeaderElectionOptions{
			Namespace:     o.Namespace,
			LeaseDuration: 4 * time.Second,
			RenewDeadline: 3 * time.Second,
			RetryPeriod:   500 * time.Millisecond,
		},
	}
}

// Start builds the operator as its ServiceAccount, calls setup, runs it
// and waits until its caches have synced; stop ends it, waits for Run to
// return and reports its error.
func (o *Operator) Start(ctx context.Context, opts runtime.Options, setup func(*runtime.Operator) error) (stop func() error, err error) {
	op, err := runtime.New(o.Config, opts)
	if err != nil {
		return nil, err
	}
	if err := setup(op); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(runCtx) }()
	o.running.Store(op)
	stop = func() error { o.running.Store(nil); cancel(); return <-done }
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, WaitTimeout, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Errorf("the operator stopped before its caches synced: %v", err)
		default:
		}
		// Its webhooks, if any, are served and registered too (webhook.Ready).
		return op.Ready() && webhook.Ready(op) == nil, nil
	})
	if err != nil {
		_ = stop()
		return nil, fmt.Errorf("waiting for the %s caches to sync and its webhooks to serve (%v): %w", o.Name, webhook.Ready(op), err)
	}
	return stop, nil
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
