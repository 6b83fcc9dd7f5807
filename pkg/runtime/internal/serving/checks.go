package serving

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
)

// Check is a health or readiness check: nil means healthy. It gets the
// probe's request (its context ends with the probe).
type Check = func(*http.Request) error

// Checks are the user checks of /healthz and /readyz, by name.
type Checks struct {
	mu            sync.Mutex
	health, ready map[string]Check
}

// AddHealth adds a check to /healthz; method names the caller's method in
// errors.
func (c *Checks) AddHealth(method, name string, check Check) error {
	return c.add(&c.health, method, name, check)
}

// AddReady adds a check to /readyz.
func (c *Checks) AddReady(method, name string, check Check) error {
	return c.add(&c.ready, method, name, check)
}

func (c *Checks) add(m *map[string]Check, method, name string, check Check) error {
	if name == "" || check == nil {
		return fmt.Errorf("runtime: %s needs a name and a check function", method)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := (*m)[name]; dup {
		return fmt.Errorf("runtime: %s: a check named %q exists; give each check its own name", method, name)
	}
	if *m == nil {
		*m = map[string]Check{}
	}
	(*m)[name] = check
	return nil
}

// Degraded wraps the error of a ready check that /readyz shows without
// failing (runtime.Degraded).
func Degraded(err error) error { return degraded{err} }

type degraded struct{ error }

func (d degraded) Unwrap() error { return d.error }

// Health runs the health checks: see run.
func (c *Checks) Health(r *http.Request) ([]string, error) { return c.run(&c.health, r) }

// Ready runs the readiness checks: see run.
func (c *Checks) Ready(r *http.Request) ([]string, error) { return c.run(&c.ready, r) }

// run runs the checks of m in name order and returns the first failure,
// naming the check. The notes are the errors of checks that returned
// Degraded, also by name.
func (c *Checks) run(m *map[string]Check, r *http.Request) (notes []string, err error) {
	c.mu.Lock()
	names := make([]string, 0, len(*m))
	for n := range *m {
		names = append(names, n)
	}
	fns := make(map[string]Check, len(names))
	for _, n := range names {
		fns[n] = (*m)[n]
	}
	c.mu.Unlock()
	slices.Sort(names)
	for _, n := range names {
		err := fns[n](r)
		var d degraded
		switch {
		case errors.As(err, &d):
			notes = append(notes, fmt.Sprintf("check %q degraded: %v", n, d.error))
		case err != nil:
			return notes, fmt.Errorf("check %q failed: %w", n, err)
		}
	}
	return notes, nil
}
