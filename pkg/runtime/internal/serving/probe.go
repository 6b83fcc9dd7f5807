package serving

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Probe answers whether the API server is reachable, from a GET of its
// /readyz made at most once a second (probes of several kubelets and
// scrapers share one request).
type Probe struct {
	check func(ctx context.Context) error
	host  string

	mu   sync.Mutex
	at   time.Time
	last error
}

// NewProbe returns the probe of the API server at host, which check asks.
func NewProbe(check func(ctx context.Context) error, host string) *Probe {
	return &Probe{check: check, host: host}
}

const probeTTL = time.Second

// Get returns nil when the API server answered, at most a second ago.
func (p *Probe) Get(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < probeTTL {
		return p.last
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	p.last = nil
	if err := p.check(ctx); err != nil {
		p.last = fmt.Errorf("the API server at %s is not reachable or not ready: %w", p.host, err)
	}
	p.at = time.Now()
	return p.last
}
