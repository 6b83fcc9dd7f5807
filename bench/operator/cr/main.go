// Command cr is the controller-runtime operator under test: the Load Go
// types of apis/load/v1 registered under the group crload.bench.opgen.dev,
// a stock ctrl.NewManager and a reconciler written the way the
// controller-runtime documentation shows, configured by the flags of
// package probe.
//
// Variants (-variant):
//
//   - stock: the manager's defaults (full objects with managedFields in the
//     cache, the lease kept on shutdown until it expires);
//   - tuned: cache.Options.DefaultTransform = TransformStripManagedFields
//     and LeaderElectionReleaseOnCancel, the two settings a tuned
//     deployment turns on.
//
// In both, For(&Load{}) carries predicate.GenerationChangedPredicate, so
// that the operator's own status writes do not wake it: opgen's default
// update filter does the same, and without it the two would not do the same
// number of reconciles.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	loadv1 "github.com/opgen-sdk/opgen/bench/apis/load/v1"
	opgencontroller "github.com/opgen-sdk/opgen/bench/internal/controller"
	"github.com/opgen-sdk/opgen/bench/internal/probe"
)

// GroupVersion is where this operator's copy of the Load CRD is served.
var GroupVersion = schema.GroupVersion{Group: "crload.bench.opgen.dev", Version: "v1"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime operator:", err)
		os.Exit(1)
	}
}

func run() error {
	var f probe.Flags
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	f.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])
	f.Complete()
	ctrl.SetLogger(zap.New())
	p, err := probe.Start(f)
	if err != nil {
		return err
	}
	cfg, err := p.RESTConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	scheme.AddKnownTypes(GroupVersion, &loadv1.Load{}, &loadv1.LoadList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)

	tuned := f.Variant == "tuned"
	cacheOpts := cache.Options{DefaultNamespaces: map[string]cache.Config{f.Namespace: {}}}
	if tuned {
		cacheOpts.DefaultTransform = cache.TransformStripManagedFields()
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                f.LeaderElect,
		LeaderElectionID:              f.LeaseName,
		LeaderElectionNamespace:       f.LeaseNamespace,
		LeaseDuration:                 &f.LeaseDuration,
		RenewDeadline:                 &f.RenewDeadline,
		RetryPeriod:                   &f.RetryPeriod,
		LeaderElectionReleaseOnCancel: tuned,
	})
	if err != nil {
		return err
	}
	r := &reconciler{Client: mgr.GetClient(), scheme: scheme, flags: f, probe: p}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("load").
		For(&loadv1.Load{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: f.Workers})
	if f.Mode == probe.ModeOwned {
		b = b.Owns(&corev1.ConfigMap{})
	}
	if err := b.Complete(r); err != nil {
		return err
	}
	if f.LeaderElect {
		go func() {
			<-mgr.Elected()
			p.Lead()
		}()
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

type reconciler struct {
	client.Client
	scheme *runtime.Scheme
	flags  probe.Flags
	probe  *probe.Probe
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obj loadv1.Load
	if err := r.Get(ctx, req.NamespacedName, &obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.probe.Reconciled(obj.Namespace, obj.Name, obj.Generation)
	switch r.flags.Mode {
	case probe.ModeStatus:
		orig := obj.DeepCopy()
		obj.Status.ObservedGeneration = obj.Generation
		obj.Status.Heartbeat = r.probe.Heartbeat()
		if err := r.Status().Patch(ctx, &obj, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, err
		}
	case probe.ModeOwned:
		if err := r.own(ctx, &obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: r.flags.Requeue}, nil
}

// own keeps the Load's ConfigMap as its spec says (CreateOrUpdate writes
// only when the object changed) and its status Ready.
func (r *reconciler) own(ctx context.Context, obj *loadv1.Load) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: obj.Name, Namespace: obj.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = opgencontroller.ConfigData(obj)
		return controllerutil.SetControllerReference(obj, cm, r.scheme)
	}); err != nil {
		return err
	}
	orig := obj.DeepCopy()
	obj.Status.ObservedGeneration = obj.Generation
	obj.Status.Phase = "Ready"
	if r.flags.StatusWrite != "always" && equality.Semantic.DeepEqual(orig.Status, obj.Status) {
		return nil
	}
	return r.Status().Patch(ctx, obj, client.MergeFrom(orig))
}
