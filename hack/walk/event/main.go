// Command event handles one event of an operator and records what the
// handling ran through: the add of a new Gadget whose handler has a
// Delete, sets the status and declares an owned ConfigMap, from the
// informer's event to the handler and its writes (the finalizer, the
// status, the apply of the ConfigMap) and the echoes of those writes; then
// a change of its spec, which the informer hands over through the
// controller's UpdateFilter (the add has no hook on the informer's side).
// It starts a local control plane, runs a first Gadget whole (so that
// what runs once per operator does not count), then the measured one,
// and writes two records:
//
//   - the path: the call stacks where the informer hands the runtime an
//     update of the measured Gadget (its UpdateFilter), where the handler
//     runs, and where each write leaves the process, one line per frame
//     of pkg/, outermost first, to $WALK_STACKS;
//   - everything it ran: the coverage counters of the measured Gadget's
//     handling alone, to $GOCOVERDIR.
//
// It is hack/walk's instrument: run that, which builds this with
// -cover -covermode=atomic.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	goruntime "runtime"
	"runtime/coverage"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

const finalizer = "walk.opgen.dev/finalizer"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "event:", err)
		os.Exit(1)
	}
}

// stacks records call stacks once armed.
type stacks struct {
	mu    sync.Mutex
	armed bool
	out   strings.Builder
}

// record writes the frames of pkg/ on the caller's stack under a line
// naming where.
func (s *stacks) record(where string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.armed {
		return
	}
	pcs := make([]uintptr, 128)
	frames := goruntime.CallersFrames(pcs[:goruntime.Callers(2, pcs)])
	var lines []string
	for {
		f, more := frames.Next()
		if i := strings.Index(f.File, "/pkg/"); i >= 0 && strings.Contains(f.Function, "opgen-sdk/opgen/pkg/") {
			lines = append(lines, fmt.Sprintf("%s:%d %s", f.File[i+1:], f.Line, f.Function))
		}
		if !more {
			break
		}
	}
	slices.Reverse(lines)
	fmt.Fprintf(&s.out, "# %s\n%s\n", where, strings.Join(lines, "\n"))
}

// gadgets handles Gadgets: a status, an owned ConfigMap, and a Delete.
type gadgets struct{ stacks *stacks }

func (g gadgets) Reconcile(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	if a.Object.Name == "measured" {
		g.stacks.record("handler")
	}
	a.Object.Status.Phase = "Ready"
	a.Own(corev1ac.ConfigMap(a.Object.Name, "").WithData(map[string]string{"message": a.Object.Spec.Message}))
	return nil
}

func (gadgets) Delete(context.Context, *plug.Action[*testapi.Gadget]) error { return nil }

func run() error {
	dir := os.Getenv("GOCOVERDIR")
	if dir == "" {
		return errors.New("no GOCOVERDIR: run go run ./hack/walk, which builds this with -cover and sets it")
	}
	// The coverage runtime learns the counter mode when it first writes
	// the meta-data: until then ClearCounters refuses.
	if err := coverage.WriteMeta(io.Discard); err != nil {
		return fmt.Errorf("%w: go run ./hack/walk builds this with -cover", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := testenv.New(testenv.Options{CRDDirs: []string{"test/testkit/testapi/crd"}, Private: true})
	fmt.Fprintln(os.Stderr, "starting a local control plane (etcd and kube-apiserver)")
	if err := env.Start(ctx); err != nil {
		return err
	}
	defer env.Stop()
	cs := env.Clientset()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "walk"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	rec := &stacks{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && strings.Contains(r.URL.Path, "measured") {
				rec.record("write: " + r.Method + " " + r.URL.Path)
			}
			return rt.RoundTrip(r)
		})
	})
	// Leader election is on, as by default: its fence is on the write path.
	op, err := runtime.New(cfg, runtime.Options{Name: "walk", Namespaces: []string{ns.Name}, MetricsAddr: "0", HealthAddr: "0",
		Logger: logr.Discard(), LeaderElection: runtime.LeaderElectionOptions{Namespace: ns.Name}})
	if err != nil {
		return err
	}
	kind, err := testapi.KindFor(op)
	if err != nil {
		return err
	}
	if _, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](gadgets{rec}), runtime.ControllerOptions[*testapi.Gadget]{
		UpdateFilter: func(oldObj, newObj *testapi.Gadget) bool {
			if newObj.Name == "measured" {
				rec.record("informer: an update of the Gadget")
			}
			return runtime.GenerationOrMetadataChanged(oldObj, newObj)
		},
		Finalizer: finalizer, Owns: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}}); err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- op.Run(runCtx) }()
	defer func() { stop(); <-done }()
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		return err
	}
	c, err := testapi.NewForConfigAndClient(env.Config, hc)
	if err != nil {
		return err
	}
	handle := func(name string) error {
		if _, err := c.Gadgets(ns.Name).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: testapi.GadgetSpec{Message: "hello"}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "waiting up to a minute for Gadget %s to be handled whole (finalizer, status, ConfigMap)\n", name)
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			g, err := c.Gadgets(ns.Name).Get(ctx, name, metav1.GetOptions{})
			if err != nil || g.Status.ObservedGeneration != g.Generation || !slices.Contains(g.Finalizers, finalizer) {
				return false, nil
			}
			_, err = cs.CoreV1().ConfigMaps(ns.Name).Get(ctx, name, metav1.GetOptions{})
			return err == nil, nil
		})
		time.Sleep(time.Second) // the echoes of its writes
		return err
	}
	if err := handle("first"); err != nil {
		return err
	}
	if err := coverage.ClearCounters(); err != nil {
		return err
	}
	rec.mu.Lock()
	rec.armed = true
	rec.mu.Unlock()
	if err := handle("measured"); err != nil {
		return err
	}
	if _, err := c.Gadgets(ns.Name).Patch(ctx, "measured", types.MergePatchType, []byte(`{"spec":{"message":"changed"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "waiting up to a minute for the change of Gadget measured to reach its ConfigMap")
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps(ns.Name).Get(ctx, "measured", metav1.GetOptions{})
		return err == nil && cm.Data["message"] == "changed", nil
	}); err != nil {
		return err
	}
	time.Sleep(time.Second) // the echoes of its writes
	rec.mu.Lock()
	rec.armed = false
	err = os.WriteFile(os.Getenv("WALK_STACKS"), []byte(rec.out.String()), 0o644)
	rec.mu.Unlock()
	if err != nil {
		return err
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		return err
	}
	return coverage.WriteCountersDir(dir)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
