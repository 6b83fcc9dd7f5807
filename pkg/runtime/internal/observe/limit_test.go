package observe

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
)

// Repeated error lines of one controller are written once a window, the
// next one with the count suppressed; other controllers, other messages
// and info lines pass; client-go's info lines are limited too.
func TestLimitRepeats(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	base := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, prefix+" "+args)
		mu.Unlock()
	}, funcr.Options{})
	log := logr.New(LimitRepeats(base.GetSink(), 100*time.Millisecond)).WithName("op")
	a, b := log.WithValues("controller", "a"), log.WithValues("controller", "b")
	boom := errors.New("connection refused")
	for range 50 {
		a.Error(boom, "handler failed")
		b.Error(boom, "handler failed")
		a.Info("handled")
		log.WithName("client-go").Info("Warning: watch ended with error")
	}
	time.Sleep(150 * time.Millisecond)
	a.Error(boom, "handler failed")
	count := func(part string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, l := range lines {
			if strings.Contains(l, part) {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 3, count("handler failed"), "once per controller, and once more after the window")
	assert.Equal(t, 1, count(`"suppressed"=49`), "the count of what was left out")
	assert.Equal(t, 50, count("handled"), "info lines pass")
	assert.Equal(t, 1, count("watch ended"), "client-go's repeats are limited")
}
