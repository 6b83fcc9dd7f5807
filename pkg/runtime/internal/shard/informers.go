package shard

import (
	"context"
	"maps"
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// Informers caches one sharded kind in one namespace for this member: an
// informer per bucket the member holds, each selecting that bucket's
// label. The member adds and drops buckets as the sharder assigns them.
// The informers of the other buckets are never made.
//
// It serves the part of cache.SharedIndexInformer the runtime calls on a
// cache: AddEventHandler, GetStore, GetIndexer, HasSynced and
// RunWithContext. The embedded interface is nil: any other method panics.
type Informers struct {
	cache.SharedIndexInformer

	// newInformer returns the informer of bucket b, not started.
	newInformer func(b int) (cache.SharedIndexInformer, error)
	// route returns the bucket an object's key is looked up in first;
	// nil: look in every bucket (owned objects are in their owner's).
	route func(key string) int
	// Dropped, when set, is called with the objects of a bucket dropped.
	Dropped func(objs []any)

	mu       sync.RWMutex
	ctx      context.Context // RunWithContext's: the buckets' informers run under it
	held     map[int]*bucketInformer
	handlers []cache.ResourceEventHandler
}

type bucketInformer struct {
	inf  cache.SharedIndexInformer
	stop context.CancelFunc
	done chan struct{}
}

// NewInformers returns the informers of a kind's buckets. newInformer
// makes bucket b's informer, not started. route returns the bucket a key
// is looked up in first; nil means every bucket (an owned object is in
// its owner's bucket, not its own).
func NewInformers(newInformer func(b int) (cache.SharedIndexInformer, error), route func(string) int) *Informers {
	return &Informers{newInformer: newInformer, route: route, held: map[int]*bucketInformer{}}
}

// AddEventHandler adds h to the informers of the buckets held and of those
// added later.
func (s *Informers) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = append(s.handlers, h)
	for _, b := range s.held {
		if _, err := b.inf.AddEventHandler(h); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// RunWithContext lets buckets be added until ctx ends, then stops them.
func (s *Informers) RunWithContext(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	held := slices.Collect(maps.Values(s.held))
	s.held = map[int]*bucketInformer{}
	s.mu.Unlock()
	for _, b := range held {
		<-b.done
	}
}

// HasSynced reports whether every held bucket's informer synced: a member
// holding no bucket is synced.
func (s *Informers) HasSynced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, b := range s.held {
		if !b.inf.HasSynced() {
			return false
		}
	}
	return true
}

// HasSyncedChecker is done once the informers of the buckets held now have
// synced (at once when none is held), or never if they stop first.
func (s *Informers) HasSyncedChecker() cache.DoneChecker {
	s.mu.RLock()
	ctx, checks := s.ctx, make([]cache.DoneChecker, 0, len(s.held))
	for _, b := range s.held {
		checks = append(checks, b.inf.HasSyncedChecker())
	}
	s.mu.RUnlock()
	done := make(chan struct{})
	if len(checks) == 0 {
		close(done)
		return heldSynced(done)
	}
	go func() {
		if cache.WaitFor(ctx, "", checks...) {
			close(done)
		}
	}()
	return heldSynced(done)
}

type heldSynced chan struct{}

func (heldSynced) Name() string            { return "the held buckets' informers" }
func (h heldSynced) Done() <-chan struct{} { return h }

// synced reports whether bucket b's informer synced (true when b is not
// held).
func (s *Informers) synced(b int) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	bi, ok := s.held[b]
	return !ok || bi.inf.HasSynced()
}

// add starts caching bucket b; it reports false when the set is not
// running (RunWithContext was not called, or it ended).
func (s *Informers) add(b int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.held[b]; ok {
		return true, nil
	}
	if s.ctx == nil || s.ctx.Err() != nil {
		return false, nil
	}
	inf, err := s.newInformer(b)
	if err != nil {
		return false, err
	}
	for _, h := range s.handlers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return false, err
		}
	}
	ctx, stop := context.WithCancel(s.ctx)
	bi := &bucketInformer{inf: inf, stop: stop, done: make(chan struct{})}
	s.held[b] = bi
	go func() {
		defer close(bi.done)
		inf.RunWithContext(ctx)
	}()
	return true, nil
}

// drop stops caching bucket b, and hands its objects to dropped.
func (s *Informers) drop(b int) {
	s.mu.Lock()
	bi, ok := s.held[b]
	delete(s.held, b)
	s.mu.Unlock()
	if !ok {
		return
	}
	bi.stop()
	<-bi.done
	if s.Dropped != nil {
		s.Dropped(bi.inf.GetStore().List())
	}
}

// informers returns the held buckets' informers, the routed one first.
func (s *Informers) informers(key string) []cache.SharedIndexInformer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]cache.SharedIndexInformer, 0, len(s.held))
	first := -1
	if s.route != nil && key != "" {
		first = s.route(key)
		if b, ok := s.held[first]; ok {
			out = append(out, b.inf)
		}
	}
	for i, b := range s.held {
		if i != first {
			out = append(out, b.inf)
		}
	}
	return out
}

func (s *Informers) GetStore() cache.Store { return bucketIndexer{s: s} }

func (s *Informers) GetIndexer() cache.Indexer { return bucketIndexer{s: s} }

// bucketIndexer reads the held buckets' caches as one. It serves GetByKey,
// List, ListKeys and ByIndex; the embedded interface is nil.
type bucketIndexer struct {
	cache.Indexer
	s *Informers
}

func (x bucketIndexer) GetByKey(key string) (any, bool, error) {
	for _, inf := range x.s.informers(key) {
		if obj, ok, err := inf.GetIndexer().GetByKey(key); ok || err != nil {
			return obj, ok, err
		}
	}
	return nil, false, nil
}

func (x bucketIndexer) List() []any {
	var out []any
	for _, inf := range x.s.informers("") {
		out = append(out, inf.GetIndexer().List()...)
	}
	return out
}

func (x bucketIndexer) ListKeys() []string {
	var out []string
	for _, inf := range x.s.informers("") {
		out = append(out, inf.GetIndexer().ListKeys()...)
	}
	return out
}

func (x bucketIndexer) ByIndex(index, value string) ([]any, error) {
	var out []any
	for _, inf := range x.s.informers("") {
		objs, err := inf.GetIndexer().ByIndex(index, value)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
