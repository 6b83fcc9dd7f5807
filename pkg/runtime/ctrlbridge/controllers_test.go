package ctrlbridge_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// gadgetReconciler is gadget as kubebuilder's controllers are written:
// read, create or update the child, update the status.
type gadgetReconciler struct {
	client.Client
	Scheme *k8sruntime.Scheme
}

func (r *gadgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g testapi.Gadget
	if err := r.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-gadget", Namespace: g.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = gadgetData(&g)
		return controllerutil.SetControllerReference(&g, cm, r.Scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	if g.Status.Phase == "Ready" && g.Status.Count == g.Spec.Size {
		return ctrl.Result{}, nil
	}
	g.Status.Phase, g.Status.Count = "Ready", g.Spec.Size
	return ctrl.Result{}, r.Status().Update(ctx, &g)
}

func (r *gadgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&testapi.Gadget{}).
		Owns(&corev1.ConfigMap{}).
		Named("gadget").
		Complete(r)
}

func gadgetData(g *testapi.Gadget) map[string]string {
	return map[string]string{"message": g.Spec.Message, "size": strconv.Itoa(int(g.Spec.Size))}
}

// gadgetController is gadget moved to opgen: it declares the child and
// the status; the pipeline writes them when they differ.
type gadgetController struct{}

func (gadgetController) Reconcile(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	g := a.Object
	a.Own(corev1ac.ConfigMap(g.Name+"-gadget", g.Namespace).WithData(gadgetData(g)))
	g.Status.Phase, g.Status.Count = "Ready", g.Spec.Size
	return nil
}

// echo copies a labelled ConfigMap's data into a Secret it owns. A
// ConfigMap with sleepAnnotation keeps its handler busy that long, or
// until the handler's context ends: work in flight at a shutdown.
type echo struct{}

const sleepAnnotation = "bridge-test.example.com/sleep"

// slowStarted is set when echo's handler starts sleeping.
var slowStarted atomic.Bool

func (echo) Reconcile(ctx context.Context, a *plug.Action[*corev1.ConfigMap]) error {
	if d, err := time.ParseDuration(a.Object.Annotations[sleepAnnotation]); err == nil {
		slowStarted.Store(true)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	data := map[string][]byte{}
	for k, v := range a.Object.Data {
		data[k] = []byte(v)
	}
	a.Own(corev1ac.Secret(a.Object.Name+"-echo", a.Object.Namespace).WithData(data))
	return nil
}

// writes counts the API writes a client makes, but for the Leases of the
// election and Events: what a steady state must not make.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/leases") && !strings.Contains(r.URL.Path, "/events") {
			w.mu.Lock()
			w.calls = append(w.calls, r.Method+" "+r.URL.Path)
			w.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// since returns the writes after the first n.
func (w *writes) since(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls[n:]...)
}

func (w *writes) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
