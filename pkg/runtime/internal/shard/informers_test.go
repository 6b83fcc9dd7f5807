package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// The checker of a member's informers is done once the buckets it held
// when asked have listed, at once when it holds none, and not while a
// bucket's list has not returned.
func TestInformersSyncedChecker(t *testing.T) {
	release := make(chan struct{})
	s := NewInformers(func(b int) (cache.SharedIndexInformer, error) {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
				if b == 1 { // bucket 1 lists once released
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return watch.NewFake(), nil
			},
		}
		return cache.NewSharedIndexInformer(listOnly{lw}, &corev1.ConfigMap{}, 0, cache.Indexers{}), nil
	}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := make(chan struct{})
	go func() { defer close(ran); s.RunWithContext(ctx) }()
	require.Eventually(t, func() bool { ok, _ := s.add(0); return ok }, 10*time.Second, time.Millisecond, "the set runs")

	require.True(t, cache.WaitFor(ctx, "", NewInformers(nil, nil).HasSyncedChecker()), "no bucket held: synced")
	require.True(t, cache.WaitFor(ctx, "", s.HasSyncedChecker()), "bucket 0 lists at once")

	ok, err := s.add(1)
	require.NoError(t, err)
	require.True(t, ok)
	pending := s.HasSyncedChecker()
	waitCtx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	defer stop()
	require.False(t, cache.WaitFor(waitCtx, "", pending), "bucket 1 has not listed")
	close(release)
	require.True(t, cache.WaitFor(ctx, "", pending), "bucket 1 listed")
	cancel()
	<-ran
}

// listOnly tells the reflector to list, not to stream the initial events
// (the fake watch would never end them with a bookmark).
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }
