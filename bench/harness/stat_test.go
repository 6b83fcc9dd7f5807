package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The harness reads its own process's stat line as it reads the
// operators' and the servers': a start time, a live state, and CPU time
// that grows while it spins.
func TestStatOfThisProcess(t *testing.T) {
	start, state := procStat(os.Getpid())
	assert.NotEmpty(t, start)
	assert.NotEqual(t, "Z", state)
	assert.True(t, alive(os.Getpid(), start))
	before := pidCPU(os.Getpid())
	for deadline := time.Now().Add(5 * time.Second); pidCPU(os.Getpid()) <= before && time.Now().Before(deadline); {
		for i := 0; i < 1e6; i++ {
			_ = i * i
		}
	}
	assert.Greater(t, pidCPU(os.Getpid()), before, "CPU time did not grow in 5 s of spinning")
	assert.Empty(t, statFields(-1), "no process, no fields")
}
