package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/election"
)

// memberLabel marks the member Leases of a sharded fleet; its value is the
// fleet's lease name.
const memberLabel = "fleet.opgen.dev/member-of"

// errLostCluster ends a cluster's operator whose Lease could not be
// renewed in time: another replica may take the cluster.
var errLostCluster = errors.New("fleet: lost the cluster's Lease; stopped its operator so that another replica can take it")

// spread runs a sharded replica: it holds a member Lease, gives each known
// cluster to one live member (assign), and campaigns for the Lease of
// each cluster given to it. It engages a cluster only while it holds the
// cluster's Lease, so two replicas never work in one cluster at once.
type spread struct {
	f      *Fleet
	le     runtime.LeaderElectionOptions
	leases coordinationclient.LeasesGetter
	log    logr.Logger
	member string // the name of this replica's member Lease

	mu       sync.Mutex
	seen     map[string]seenLease // member Leases, by name
	holders  map[string]seenLease // cluster Leases, by cluster
	electors map[string]context.CancelFunc
}

// seenLease is a Lease as last seen, and when its renewal was last seen
// to change: liveness counts from there, on this replica's clock, never
// from the holder's.
type seenLease struct {
	identity, renewed, rv string
	at                    time.Time
	record                resourcelock.LeaderElectionRecord
}

func (f *Fleet) runSpread(ctx context.Context) error {
	le := f.home.Options().LeaderElection
	s := &spread{
		f: f, le: le, leases: f.home.Clientset().CoordinationV1(),
		log:      f.log.WithValues("identity", le.Identity),
		member:   fmt.Sprintf("%s-fleet-member-%08x", le.LeaseName, hash32(le.Identity)),
		seen:     map[string]seenLease{},
		holders:  map[string]seenLease{},
		electors: map[string]context.CancelFunc{},
	}
	return s.run(ctx)
}

func (s *spread) run(ctx context.Context) error {
	// Every Lease of the namespace: the members' (labelled) and the
	// clusters' (named after them), which client-go's lock cannot label.
	factory := informers.NewSharedInformerFactoryWithOptions(s.f.home.Clientset(), 0, informers.WithNamespace(s.le.Namespace))
	inf := factory.Coordination().V1().Leases().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.observe,
		UpdateFunc: func(_, obj any) { s.observe(obj) },
		DeleteFunc: s.forget,
	}); err != nil {
		return err
	}
	infCtx, stopInformer := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInformer()
	go inf.Run(infCtx.Done())
	if err := s.renew(ctx); err != nil {
		s.log.Error(err, "cannot write this replica's member Lease yet; retrying", "lease", s.member)
	}
	if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
		return nil
	}
	var wg sync.WaitGroup
	defer func() {
		// Leave first, so that the others take this replica's clusters
		// as soon as it lets them go.
		s.leave()
		s.mu.Lock()
		for _, stop := range s.electors {
			stop()
		}
		s.mu.Unlock()
		wg.Wait()
	}()
	tick := time.NewTicker(s.le.RetryPeriod)
	defer tick.Stop()
	for {
		s.rebalance(ctx, &wg)
		select {
		case <-ctx.Done():
			return nil
		case <-s.f.changed:
		case <-tick.C:
			if err := s.renew(ctx); err != nil && ctx.Err() == nil {
				s.log.Error(err, "cannot renew this replica's member Lease; the others count it as gone once it expires", "lease", s.member)
			}
		}
	}
}

// rebalance starts a campaign for each cluster given to this replica and
// ends the campaigns (and so the work) of the others.
func (s *spread) rebalance(ctx context.Context, wg *sync.WaitGroup) {
	s.deleteStale()
	known := s.f.knownNames()
	owners := assign(known, s.live(), s.holding())
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, stop := range s.electors {
		if owners[name] != s.le.Identity {
			s.log.Info("the cluster goes to another replica: letting it go", "cluster", name, "to", owners[name])
			stop()
			delete(s.electors, name)
		}
	}
	for _, name := range known {
		if _, ok := s.electors[name]; ok || owners[name] != s.le.Identity {
			continue
		}
		cctx, stop := context.WithCancel(ctx)
		s.electors[name] = stop
		wg.Go(func() { s.campaign(cctx, name) })
	}
}

// campaign holds cluster name's Lease and runs its operator until ctx
// ends; a lost Lease campaigns again.
func (s *spread) campaign(ctx context.Context, name string) {
	lease := s.le.LeaseName + "-cluster-" + name
	for ctx.Err() == nil {
		el := election.New(s.leases, election.Config{
			Namespace: s.le.Namespace, LeaseName: lease, Identity: s.le.Identity,
			LeaseDuration: s.le.LeaseDuration, RenewDeadline: s.le.RenewDeadline, RetryPeriod: s.le.RetryPeriod,
			Acquired: "holds the cluster's Lease", Lost: errLostCluster,
		}, s.f.home.Options().Clock, s.log.WithValues("cluster", name))
		s.mu.Lock()
		if h, ok := s.holders[name]; ok {
			el.Saw(h.record, h.at) // a dead holder's lease expires when seen to, not a lease duration from now
		}
		s.mu.Unlock()
		err := el.Run(ctx, func(lctx context.Context) bool {
			s.f.runCluster(lctx, name)
			return true
		})
		if _, _, ok := s.f.lookup(name); !ok {
			s.deleteReleased(lease)
			return
		}
		if err == nil {
			return
		}
	}
}

// live returns the identities of the live members, this one included,
// sorted.
func (s *spread) live() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := []string{s.le.Identity}
	now := time.Now()
	for _, m := range s.seen {
		if m.identity != "" && now.Sub(m.at) < s.le.LeaseDuration && !slices.Contains(ids, m.identity) {
			ids = append(ids, m.identity)
		}
	}
	slices.Sort(ids)
	return ids
}

// holding returns the holder of each cluster's Lease that holds, by
// cluster.
func (s *spread) holding() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	now := time.Now()
	for c, h := range s.holders {
		if h.identity != "" && now.Sub(h.at) < s.le.LeaseDuration {
			out[c] = h.identity
		}
	}
	return out
}

// table returns the map and key that Lease l is followed in: a member's,
// a cluster's, or none.
func (s *spread) table(l *coordinationv1.Lease) (map[string]seenLease, string) {
	if l.Labels[memberLabel] == labelValue(s.le.LeaseName) && l.Name != s.member {
		return s.seen, l.Name
	}
	if c, ok := strings.CutPrefix(l.Name, s.le.LeaseName+"-cluster-"); ok {
		return s.holders, c
	}
	return nil, ""
}

func (s *spread) observe(obj any) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return
	}
	var id, renewed string
	if l.Spec.HolderIdentity != nil {
		id = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.UTC().Format(time.RFC3339Nano)
	}
	s.mu.Lock()
	m, key := s.table(l)
	if m == nil {
		s.mu.Unlock()
		return
	}
	old, had := m[key]
	seen := seenLease{identity: id, renewed: renewed, rv: l.ResourceVersion, at: old.at, record: *resourcelock.LeaseSpecToLeaderElectionRecord(&l.Spec)}
	if !had || old.renewed != renewed || old.identity != id {
		seen.at = time.Now()
	}
	m[key] = seen
	s.mu.Unlock()
	if !had || old.identity != id {
		s.f.wake()
	}
}

func (s *spread) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return
	}
	s.mu.Lock()
	if m, key := s.table(l); m != nil {
		delete(m, key)
	}
	s.mu.Unlock()
	s.f.wake()
}

// renew writes this replica's member Lease: its identity, now.
func (s *spread) renew(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.le.RenewDeadline)
	defer cancel()
	leases := s.leases.Leases(s.le.Namespace)
	now := metav1.NowMicro()
	secs := int32(s.le.LeaseDuration / time.Second)
	l, err := leases.Get(ctx, s.member, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: s.member, Labels: map[string]string{memberLabel: labelValue(s.le.LeaseName)}},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &s.le.Identity, LeaseDurationSeconds: &secs, RenewTime: &now},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &s.le.Identity, &secs, &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// leave deletes this replica's member Lease, at a graceful stop.
func (s *spread) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), s.le.RenewDeadline)
	defer cancel()
	err := s.leases.Leases(s.le.Namespace).Delete(ctx, s.member, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		s.log.Error(err, "could not delete this replica's member Lease; the others count it as gone once it expires", "lease", s.member)
	}
}

// deleteStale deletes the member Leases of replicas gone for three lease
// durations, unless they changed since.
func (s *spread) deleteStale() {
	s.mu.Lock()
	stale := map[string]string{}
	for name, m := range s.seen {
		if time.Since(m.at) > 3*s.le.LeaseDuration {
			stale[name] = m.rv
		}
	}
	s.mu.Unlock()
	for name, rv := range stale {
		ctx, cancel := context.WithTimeout(context.Background(), s.le.RenewDeadline)
		err := s.leases.Leases(s.le.Namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		cancel()
		if err == nil {
			s.log.Info("deleted the member Lease of a replica that left", "lease", name)
		}
	}
}

// deleteReleased deletes the Lease of a cluster that went, once released.
func (s *spread) deleteReleased(lease string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.le.RenewDeadline)
	defer cancel()
	leases := s.leases.Leases(s.le.Namespace)
	l, err := leases.Get(ctx, lease, metav1.GetOptions{})
	if err != nil || (l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && *l.Spec.HolderIdentity != s.le.Identity) {
		return
	}
	_ = leases.Delete(ctx, lease, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &l.ResourceVersion}})
}

// assign gives each cluster to one member, at most ⌈clusters/members⌉
// each: first to its holder (in holders) while that one is live and below
// the bound, so that a member that joins or leaves moves only what it must;
// the rest to the first member below the bound in the order of rendezvous
// hashing of the cluster with each member. The result depends only on the
// three inputs, so every replica that saw the same Leases computes the
// same.
func assign(clusters, members []string, holders map[string]string) map[string]string {
	out := make(map[string]string, len(clusters))
	if len(members) == 0 {
		return out
	}
	clusters, members = slices.Sorted(slices.Values(clusters)), slices.Sorted(slices.Values(members))
	bound := (len(clusters) + len(members) - 1) / len(members)
	load := map[string]int{}
	for _, c := range clusters {
		if m, ok := holders[c]; ok && slices.Contains(members, m) && load[m] < bound {
			out[c] = m
			load[m]++
		}
	}
	for _, c := range clusters {
		if _, ok := out[c]; ok {
			continue
		}
		ranked := slices.Clone(members)
		slices.SortStableFunc(ranked, func(a, b string) int {
			return cmp.Compare(hash32(c+"/"+b), hash32(c+"/"+a))
		})
		for _, m := range ranked {
			if load[m] < bound {
				out[c] = m
				load[m]++
				break
			}
		}
	}
	return out
}

func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// labelValue fits a lease name into a label value (63 characters).
func labelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	return fmt.Sprintf("%s-%08x", s[:54], hash32(s))
}
