package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// A Provider finds the member clusters. Run tells e of each cluster that
// appears or whose config changes (Engage) and of each that goes
// (Disengage), until ctx ends. It runs on every replica.
type Provider interface {
	Run(ctx context.Context, home *runtime.Operator, e Engager) error
}

// Engager is what a Provider tells of the clusters it finds; *Fleet is
// one.
type Engager interface {
	// Engage records that cluster name is reached with cfg, or now with a
	// changed cfg.
	Engage(name string, cfg *rest.Config)
	// Disengage records that cluster name is gone.
	Disengage(name string)
}

// DefaultClusterLabel marks the Secrets of the home cluster that hold a
// member cluster's kubeconfig (Secrets.Label).
const DefaultClusterLabel = "opgen.dev/cluster"

// Secrets finds the member clusters in Secrets of the home cluster: each
// Secret labelled Label holds a kubeconfig under Key, and the label's
// value names the cluster (or, when empty, the Secret's name). A changed
// Secret engages its cluster again; a deleted one disengages it. The
// operator needs get, list and watch on Secrets in Namespace.
type Secrets struct {
	// Namespace holds the Secrets. Default: the namespace of the
	// operator's leader election Lease, which is its own.
	Namespace string
	// Label marks the Secrets. Default DefaultClusterLabel.
	Label string
	// Key is the data key of the kubeconfig. Default "kubeconfig".
	Key string
}

// Run watches the Secrets until ctx ends.
func (s Secrets) Run(ctx context.Context, home *runtime.Operator, e Engager) error {
	ns := s.Namespace
	if ns == "" {
		ns = home.Options().LeaderElection.Namespace
	}
	if ns == "" {
		return fmt.Errorf("fleet.Secrets: no namespace for the clusters' Secrets: set Secrets.Namespace (--cluster-secrets-namespace) or %s", runtime.EnvPodNamespace)
	}
	label := orDefault(s.Label, DefaultClusterLabel)
	key := orDefault(s.Key, "kubeconfig")
	log := home.Logger().WithName("fleet").WithValues("namespace", ns, "label", label)
	factory := informers.NewSharedInformerFactoryWithOptions(home.Clientset(), 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = label }))
	inf := factory.Core().V1().Secrets().Informer()
	var (
		mu    sync.Mutex
		seen  = map[string][]byte{} // by cluster: the kubeconfig engaged
		owner = map[string]string{} // by cluster: the Secret that names it
	)
	put := func(obj any) {
		sec, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		name := sec.Labels[label]
		if name == "" {
			name = sec.Name
		}
		mu.Lock()
		defer mu.Unlock()
		for n, o := range owner {
			if o == sec.Name && n != name { // the label now names another cluster
				delete(owner, n)
				delete(seen, n)
				e.Disengage(n)
			}
		}
		if o, ok := owner[name]; ok && o != sec.Name {
			log.Error(nil, "two Secrets name one cluster: the second is left out; change its label", "cluster", name, "secret", sec.Name, "engagedFrom", o)
			return
		}
		data := sec.Data[key]
		if bytes.Equal(seen[name], data) {
			return
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
		if err != nil {
			log.Error(err, "the Secret holds no usable kubeconfig: fix its data key; the cluster keeps its last good config", "secret", sec.Name, "key", key, "cluster", name)
			return
		}
		owner[name], seen[name] = sec.Name, data
		e.Engage(name, cfg)
	}
	drop := func(obj any) {
		sec, ok := deleted[*corev1.Secret](obj)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for name, o := range owner {
			if o == sec.Name {
				delete(owner, name)
				delete(seen, name)
				e.Disengage(name)
			}
		}
	}
	return runInformer(ctx, inf, put, drop)
}

// Dir finds the member clusters in kubeconfig files in a directory, for
// development and tests: each file names a cluster after its name without
// the extension. Files are read again every Every.
type Dir struct {
	// Path is the directory. Required.
	Path string
	// Every is how often the directory is read. Default 2s.
	Every time.Duration
}

// Run reads the directory until ctx ends.
func (d Dir) Run(ctx context.Context, home *runtime.Operator, e Engager) error {
	if d.Path == "" {
		return fmt.Errorf("fleet.Dir: set Path (--cluster-kubeconfig-dir) to the directory of the clusters' kubeconfigs")
	}
	log := home.Logger().WithName("fleet").WithValues("dir", d.Path)
	seen := map[string][]byte{}
	t := time.NewTicker(orDefault(d.Every, 2*time.Second))
	defer t.Stop()
	for {
		files, err := os.ReadDir(d.Path)
		if err != nil {
			log.Error(err, "cannot read the directory of kubeconfigs; the clusters keep their last config")
		}
		found := map[string]bool{}
		for _, f := range files {
			if f.IsDir() || strings.HasPrefix(f.Name(), ".") {
				continue
			}
			name := strings.TrimSuffix(f.Name(), filepath.Ext(f.Name()))
			path := filepath.Join(d.Path, f.Name())
			data, err := os.ReadFile(path)
			if err != nil {
				log.Error(err, "cannot read a kubeconfig", "file", path)
				continue
			}
			found[name] = true
			if bytes.Equal(seen[name], data) {
				continue
			}
			cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
			if err != nil {
				log.Error(err, "the file holds no usable kubeconfig: fix it; the cluster keeps its last good config", "file", path)
				continue
			}
			seen[name] = data
			e.Engage(name, cfg)
		}
		if err == nil {
			for name := range seen {
				if !found[name] {
					delete(seen, name)
					e.Disengage(name)
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// runInformer runs inf until ctx ends, with put called for each object
// added or updated and drop for each deleted.
func runInformer(ctx context.Context, inf cache.SharedIndexInformer, put, drop func(any)) error {
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    put,
		UpdateFunc: func(_, obj any) { put(obj) },
		DeleteFunc: drop,
	}); err != nil {
		return err
	}
	inf.Run(ctx.Done())
	return nil
}

// deleted returns the object of an informer's delete notification, which
// may be a tombstone.
func deleted[T any](obj any) (T, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	t, ok := obj.(T)
	return t, ok
}

func orDefault[V comparable](v, def V) V {
	var zero V
	if v == zero {
		return def
	}
	return v
}
