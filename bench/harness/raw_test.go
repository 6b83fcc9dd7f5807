package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLatenciesCountAReconcileOfALaterGeneration(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	writes := []rec{
		{name: "a", gen: 2, t: at(0)},
		{name: "a", gen: 3, t: at(10)}, // written before a/2 was reconciled
		{name: "b", gen: 5, t: at(20)},
		{name: "c", gen: 2, t: at(30)}, // never reconciled
	}
	seen := firsts{}
	seen.add("a", 1, at(-500)) // the start's reconcile: older than any write
	seen.add("a", 3, at(50))
	seen.add("a", 3, at(90)) // a second reconcile of a/3 is not its first
	seen.add("b", 5, at(25))
	seen.add("c", 1, at(-400))

	out, missing := latencies(writes, seen)
	assert.Equal(t, 1, missing)
	assert.Equal(t, 1, seen.unhandled(writes))
	assert.InDeltaSlice(t, []float64{0.050, 0.040, 0.005}, out, 1e-9)
}
