package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	loadv1 "github.com/opgen-sdk/opgen/bench/apis/load/v1"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// The API groups of the two frameworks: the same Go types and CRD schema.
const (
	opgenGroup = "load.bench.opgen.dev"
	crGroup    = "crload.bench.opgen.dev"
	// leaseNamespace holds every leader-election Lease.
	leaseNamespace = "bench-leases"
)

// groupOf is the API group a variant serves: every opgen binary, either
// side of a comparison included, serves the opgen group.
func groupOf(variant string) string {
	if framework(variant) == cr {
		return crGroup
	}
	return opgenGroup
}

func gvr(group string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: "loads"}
}

// namespace names the namespace of a framework's objects of one size
// ("small", "large", "empty"); the raw client has its own. Each side of
// a comparison has its own too (a-small, b-small, …), so that neither
// sees the objects the other wrote.
func namespace(variant, size string) string {
	return strings.ToLower(framework(variant)) + "-" + size
}

const rawNamespace = "raw"

// startCluster starts etcd and kube-apiserver with their data on tmpfs
// when /dev/shm exists, and installs the two CRDs.
func (s *suite) startCluster(ctx context.Context) error {
	base := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "opgen-bench-")
	if err != nil {
		return err
	}
	s.clusterDir = dir
	s.tmpfs = base != ""
	s.res.Machine["etcdOnTmpfs"] = strconv.FormatBool(s.tmpfs)
	opts := testenv.Options{Dir: dir}
	if s.cfg.cbor {
		opts.APIServerFlags = append(opts.APIServerFlags, "--feature-gates=CBORServingAndStorage=true")
	}
	// testenv turns profiling off; the throughput rounds collect the
	// API server's heap through it before each window, and
	// BENCH_CPU_PROFILES saves its profile of each window.
	opts.APIServerFlags = append(opts.APIServerFlags, "--profiling=true")
	s.env = testenv.New(opts)
	if err := s.env.Start(ctx); err != nil {
		return err
	}
	crds, err := testenv.ReadCRDs(filepath.Join(s.moduleDir, "config", "crd"))
	if err != nil {
		return err
	}
	if len(crds) != 1 {
		return fmt.Errorf("want the one Load CRD in config/crd, found %d", len(crds))
	}
	renamed := crds[0].DeepCopy()
	renamed.Name = "loads." + crGroup
	renamed.Spec.Group = crGroup
	if err := s.env.ApplyCRDs(ctx, []*apiextensionsv1.CustomResourceDefinition{crds[0], renamed}...); err != nil {
		return err
	}
	s.dyn, err = dynamic.NewForConfig(s.adminConfig())
	return err
}

func (s *suite) stopCluster() {
	if s.env != nil {
		s.env.Stop()
	}
	if s.clusterDir != "" {
		_ = os.RemoveAll(s.clusterDir)
	}
}

func (s *suite) createNamespaces(ctx context.Context, names ...string) error {
	for _, n := range names {
		_, err := s.env.Clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
	}
	return nil
}

// objectName is the name of the i-th benchmark object.
func objectName(i int) string { return fmt.Sprintf("load-%05d", i) }

// populate creates n Loads in ns of group the way two appliers would:
// "bench-author" applies labels, annotations and the spec, "bench-status"
// applies the status (observedGeneration 1, phase Ready, a Ready
// condition), so that each object carries two managedFields entries and is
// already handled as far as either operator is concerned.
func (s *suite) populate(ctx context.Context, group, ns string, n int) error {
	res := s.dyn.Resource(gvr(group)).Namespace(ns)
	work := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := applyLoad(ctx, res, group, ns, i); err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			}
		})
	}
	start := time.Now()
	for i := range n {
		if n >= 10000 && i > 0 && i%(n/10) == 0 {
			logf("   %s/%s: %d of %d objects created (%v)", group, ns, i, n, time.Since(start).Round(time.Second))
		}
		select {
		case work <- i:
		case err := <-errc:
			close(work)
			wg.Wait()
			return err
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

func applyLoad(ctx context.Context, res dynamic.ResourceInterface, group, ns string, i int) error {
	name := objectName(i)
	obj := newLoad(group, ns, name, i)
	spec, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	force := metav1.PatchOptions{FieldManager: "bench-author", Force: ptr.To(true)}
	if _, err := res.Patch(ctx, name, types.ApplyPatchType, spec, force); err != nil {
		return fmt.Errorf("apply %s/%s: %w", ns, name, err)
	}
	st := &loadv1.Load{TypeMeta: obj.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	st.Status.ObservedGeneration = 1
	st.Status.Phase = "Ready"
	st.Status.Conditions = []metav1.Condition{{
		Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Populated",
		Message: "created by the benchmark", LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0)),
	}}
	status, err := json.Marshal(st)
	if err != nil {
		return err
	}
	force.FieldManager = "bench-status"
	if _, err := res.Patch(ctx, name, types.ApplyPatchType, status, force, "status"); err != nil {
		return fmt.Errorf("apply the status of %s/%s: %w", ns, name, err)
	}
	return nil
}

// newLoad returns the i-th benchmark object: about 2 KiB of JSON.
func newLoad(group, ns, name string, i int) *loadv1.Load {
	env := make([]loadv1.EnvVar, 10)
	for k := range env {
		env[k] = loadv1.EnvVar{Name: fmt.Sprintf("SETTING_%02d", k), Value: fmt.Sprintf("value-%d-%d-%s", i, k, strings.Repeat("x", 24))}
	}
	cfg := make(map[string]string, 10)
	for k := range 10 {
		cfg[fmt.Sprintf("key-%02d", k)] = fmt.Sprintf("config value %d of object %d, %s", k, i, strings.Repeat("y", 20))
	}
	return &loadv1.Load{
		TypeMeta: metav1.TypeMeta{APIVersion: group + "/v1", Kind: "Load"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels:      map[string]string{"app.kubernetes.io/name": "load", "app.kubernetes.io/instance": name, "tier": "backend"},
			Annotations: map[string]string{"bench.opgen.dev/created-by": "the benchmark harness"},
		},
		Spec: loadv1.LoadSpec{
			Image:    "registry.example.com/team/load:v1.2.3",
			Replicas: int32(i%5 + 1),
			Command:  []string{"/bin/load", "--serve", "--port=8080", "--log-level=info"},
			Env:      env,
			Ports: []loadv1.Port{
				{Name: "http", Port: 8080, Protocol: "TCP"},
				{Name: "metrics", Port: 9090, Protocol: "TCP"},
				{Name: "grpc", Port: 9443, Protocol: "TCP"},
			},
			Config:      cfg,
			Description: "A benchmark object shaped like a small workload. " + strings.Repeat("Lorem ipsum dolor sit amet. ", 6),
		},
	}
}
