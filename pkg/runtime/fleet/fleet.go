package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// Options configure a Fleet.
type Options struct {
	// Options configure the fleet's operator in the home cluster: its
	// name, leader election, servers and logs. The operator in each member
	// cluster gets the same, except that Cluster is the member's name,
	// leader election is off (the fleet elects in the home cluster), it
	// serves nothing of its own (the fleet serves the metrics of all) and
	// its logs carry the cluster's name. Sharding spreads the clusters,
	// not the objects, over the replicas.
	runtime.Options

	// Clusters finds the member clusters. Required.
	Clusters Provider

	// HomeCluster, when set, makes the home cluster a member under this
	// name. Default "": the home cluster holds the fleet's Leases and its
	// clusters' Secrets only.
	HomeCluster string
}

// Fleet runs one operator in each member cluster from one process. Make
// one with New, then call Run once.
type Fleet struct {
	home     *runtime.Operator
	opts     Options
	setup    func(*runtime.Operator) error
	log      logr.Logger
	metrics  *metrics
	sharding bool

	mu       sync.Mutex
	known    map[string]known    // the clusters the provider found
	running  map[string]*cluster // the clusters engaged here
	changed  chan struct{}       // wakes the loop that engages clusters
	homeHost string
}

// known is a member cluster as its provider last described it.
type known struct {
	cfg *rest.Config
	// namespaces, when set, are the only ones the cluster's operator
	// works in (EngageIn).
	namespaces []string
	// changed is closed when the cluster's config changes or it goes.
	changed chan struct{}
}

// cluster is a member cluster this replica engages: its operator runs.
type cluster struct {
	name  string
	op    *runtime.Operator
	since time.Time
}

// New returns the fleet of the operator whose home cluster home is. setup
// registers the controllers, as for runtime.Main; it runs once per
// engaged cluster, on that cluster's operator.
func New(home *rest.Config, opts Options, setup func(*runtime.Operator) error) (*Fleet, error) {
	if opts.Clusters == nil {
		return nil, errors.New("fleet.New: set Options.Clusters to the provider of the member clusters, such as fleet.Secrets{} (kubeconfigs in Secrets of the home cluster) or fleet.Dir{Path: ...}")
	}
	if setup == nil {
		return nil, errors.New("fleet.New: setup is nil; pass the generated controller.Setup")
	}
	if opts.HomeCluster != "" {
		if err := checkName(opts.HomeCluster); err != nil {
			return nil, fmt.Errorf("fleet.New: Options.HomeCluster: %w", err)
		}
	}
	homeOpts := opts.Options
	sharding := homeOpts.Sharding
	homeOpts.Sharding = false // the fleet spreads clusters, not objects
	op, err := runtime.New(home, homeOpts)
	if err != nil {
		return nil, err
	}
	if sharding && op.Options().LeaderElection.Disabled {
		return nil, errors.New("fleet.New: Options.Sharding (--sharding) spreads the clusters over the replicas with Leases in the home cluster: turn leader election on (--leader-elect=true), or sharding off")
	}
	f := &Fleet{
		home: op, opts: opts, setup: setup, sharding: sharding,
		log:      op.Logger().WithName("fleet"),
		known:    map[string]known{},
		running:  map[string]*cluster{},
		changed:  make(chan struct{}, 1),
		homeHost: home.Host,
	}
	f.metrics = newMetrics(f)
	if err := f.metrics.register(op); err != nil {
		return nil, err
	}
	if err := op.AddReadyCheck("clusters", f.readyCheck); err != nil {
		return nil, err
	}
	if err := op.AddReplicaRunnable(runtime.RunnableFunc(f.runProvider)); err != nil {
		return nil, err
	}
	if sharding {
		err = op.AddReplicaRunnable(runtime.RunnableFunc(f.runSpread))
	} else {
		err = op.AddLeaderRunnable(runtime.RunnableFunc(f.engageAll))
	}
	if err != nil {
		return nil, err
	}
	if opts.HomeCluster != "" {
		f.Engage(opts.HomeCluster, home)
	}
	return f, nil
}

// Home returns the fleet's operator in the home cluster: its servers,
// metrics registry and logger serve the whole fleet.
func (f *Fleet) Home() *runtime.Operator { return f.home }

// Run runs the fleet until ctx ends: the provider, and the operators of
// the clusters this replica engages (all of them on the leader, or its
// share with Options.Sharding). It returns after every cluster's operator
// stopped.
func (f *Fleet) Run(ctx context.Context) error { return f.home.Run(ctx) }

// Clusters returns the names of the clusters this replica engages, sorted.
func (f *Fleet) Clusters() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.running))
}

// Cluster returns the operator of the engaged cluster name, or nil.
func (f *Fleet) Cluster(name string) *runtime.Operator {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.running[name]; c != nil {
		return c.op
	}
	return nil
}

// Engage records that cluster name is reached with cfg, or now with a
// changed cfg; the fleet engages it, or engages it again. Providers call
// it.
func (f *Fleet) Engage(name string, cfg *rest.Config) { f.EngageIn(name, cfg) }

// EngageIn is Engage for a cluster whose operator works in the given
// namespaces only, instead of Options.Namespaces: a namespace as a
// cluster (Namespaces).
func (f *Fleet) EngageIn(name string, cfg *rest.Config, namespaces ...string) {
	if err := checkName(name); err != nil {
		f.log.Error(err, "a cluster is left out: rename it", "cluster", name)
		return
	}
	f.mu.Lock()
	if old, ok := f.known[name]; ok {
		close(old.changed)
	}
	f.known[name] = known{cfg: rest.CopyConfig(cfg), namespaces: slices.Clone(namespaces), changed: make(chan struct{})}
	f.mu.Unlock()
	f.wake()
}

// Disengage records that cluster name is gone; the fleet stops its
// operator. Providers call it.
func (f *Fleet) Disengage(name string) {
	f.mu.Lock()
	if old, ok := f.known[name]; ok {
		close(old.changed)
		delete(f.known, name)
	}
	f.mu.Unlock()
	f.wake()
}

func (f *Fleet) wake() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// knownNames returns the names of the known clusters, sorted.
func (f *Fleet) knownNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.known))
}

// lookup returns the config of cluster name and a channel closed when it
// changes; ok is false when the cluster is not known.
func (f *Fleet) lookup(name string) (cfg *rest.Config, changed <-chan struct{}, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.known[name]
	return k.cfg, k.changed, ok
}

// runProvider runs the provider on every replica: each one needs to know
// the clusters, the leader to engage them all, a sharded member its share.
func (f *Fleet) runProvider(ctx context.Context) error {
	err := f.opts.Clusters.Run(ctx, f.home, f)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("fleet: the cluster provider %T stopped: %w", f.opts.Clusters, err)
	}
	return nil
}

// engageAll engages every known cluster while this replica leads: a
// cluster the provider adds is engaged, one it removes is disengaged.
// When the lead ends it stops every cluster's operator and returns.
func (f *Fleet) engageAll(ctx context.Context) error {
	var wg sync.WaitGroup
	stops := map[string]context.CancelFunc{}
	defer func() {
		for _, stop := range stops {
			stop()
		}
		wg.Wait()
	}()
	for {
		want := f.knownNames()
		for name, stop := range stops {
			if !slices.Contains(want, name) {
				stop()
				delete(stops, name)
			}
		}
		for _, name := range want {
			if _, ok := stops[name]; ok {
				continue
			}
			cctx, stop := context.WithCancel(ctx)
			stops[name] = stop
			wg.Go(func() { f.runCluster(cctx, name) })
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.changed:
		}
	}
}

// runCluster runs cluster name's operator until ctx ends or the cluster
// goes, again with its new config each time the config changes, and
// again after a backoff when it stops on its own. It returns once the
// operator stopped.
func (f *Fleet) runCluster(ctx context.Context, name string) {
	log := f.log.WithValues("cluster", name)
	backoff := time.Second
	for ctx.Err() == nil {
		cfg, changed, ok := f.lookup(name)
		if !ok {
			return
		}
		err := f.runOnce(ctx, name, cfg, changed, log)
		switch {
		case ctx.Err() != nil:
			return
		case isClosed(changed):
			backoff = time.Second
			continue
		}
		f.metrics.failures.WithLabelValues(name).Inc()
		log.Error(err, "the cluster's operator stopped; it starts again after the backoff, or at once when the cluster's config changes", "backoff", backoff)
		select {
		case <-ctx.Done():
		case <-changed:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// runOnce builds cluster name's operator on cfg and runs it until ctx
// ends or changed is closed.
func (f *Fleet) runOnce(ctx context.Context, name string, cfg *rest.Config, changed <-chan struct{}, log logr.Logger) error {
	op, err := runtime.New(cfg, f.memberOptions(name))
	if err != nil {
		return fmt.Errorf("build the operator: %w", err)
	}
	if name == f.opts.HomeCluster {
		homes.Store(op, struct{}{})
		defer homes.Delete(op)
	}
	if err := f.setup(op); err != nil {
		return fmt.Errorf("set up the controllers: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-changed:
			if _, _, ok := f.lookup(name); ok {
				log.Info("the cluster's config changed: engaging it again")
			}
			stop()
		case <-runCtx.Done():
		}
	}()
	c := &cluster{name: name, op: op, since: time.Now()}
	f.mu.Lock()
	f.running[name] = c
	f.mu.Unlock()
	f.metrics.engaged(name, true)
	log.Info("engaged the cluster", "host", cfg.Host)
	defer func() {
		f.mu.Lock()
		delete(f.running, name)
		f.mu.Unlock()
		f.metrics.engaged(name, false)
		log.Info("disengaged the cluster", "engagedFor", time.Since(c.since).Round(time.Millisecond))
	}()
	go f.metrics.observeEngage(runCtx, c)
	err = op.Run(runCtx)
	if err == nil && runCtx.Err() == nil {
		err = errors.New("it returned")
	}
	return err
}

// namespacesOf returns the namespaces cluster name's operator works in:
// those it was engaged in, or Options.Namespaces.
func (f *Fleet) namespacesOf(name string) []string {
	f.mu.Lock()
	ns := f.known[name].namespaces
	f.mu.Unlock()
	if len(ns) > 0 {
		return ns
	}
	return f.home.Options().Namespaces
}

// memberOptions are the options of cluster name's operator: the home
// operator's, in that cluster, without election or servers of its own.
func (f *Fleet) memberOptions(name string) runtime.Options {
	o := f.home.Options()
	o.Cluster = name
	o.Namespaces = f.namespacesOf(name)
	o.Sharding = false
	o.LeaderElection = runtime.LeaderElectionOptions{Disabled: true}
	o.MetricsAddr, o.HealthAddr, o.PprofAddr = "0", "0", ""
	o.Webhook.Addr = "0"
	o.Logger = o.Logger.WithValues("cluster", name)
	return o
}

// checkName rejects a cluster name that cannot name its Lease or label
// its metrics: a DNS-1123 label.
func checkName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("the cluster name %q is not a DNS-1123 label (%s), as it names the cluster's Lease in the home cluster", name, errs[0])
	}
	return nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
