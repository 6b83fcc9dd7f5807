package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests change process-wide settings: none runs in parallel.

func TestSetInstallsTheLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	undo, installed := Set(Default)
	require.True(t, installed)
	assert.Equal(t, int64(Default), debug.SetMemoryLimit(-1))
	undo()
	assert.NotEqual(t, int64(Default), debug.SetMemoryLimit(-1), "undo keeps the limit")
}

func TestTheUserChoiceWins(t *testing.T) {
	for _, env := range []string{"GOMEMLIMIT", "GOGC"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv("GOGC", "")
			t.Setenv(env, "200")
			before := debug.SetMemoryLimit(-1)
			undo, installed := Set(Default)
			defer undo()
			assert.False(t, installed)
			assert.Equal(t, before, debug.SetMemoryLimit(-1))
		})
	}
}

// A live heap above three quarters of the limit raises the limit to twice
// the live heap, so that the collector does not run back to back: once the
// 16 MiB are alive, the limit ends above 4/3 of them.
func TestTheLimitFollowsALargeLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	const limit = 8 << 20
	undo, installed := Set(limit)
	require.True(t, installed)
	defer undo()
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 256<<10)) // 16 MiB in all
	}
	const want = (16 << 20) * 4 / 3
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) <= want && time.Now().Before(deadline) {
		runtime.GC() // each collection runs the follower's check after it
		time.Sleep(10 * time.Millisecond)
	}
	got := debug.SetMemoryLimit(-1)
	assert.Greater(t, got, int64(want), "the limit leaves the live heap of 16 MiB below three quarters of it")
	runtime.KeepAlive(live)
}
