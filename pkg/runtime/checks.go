package runtime

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"slices"
	"sync"
)

// Check is a user health or readiness check: nil means healthy. It gets
// the probe's request (its context ends with the probe).
type Check func(*http.Request) error

// checks are the user checks of /healthz and /readyz, by name.
type checks struct {
	mu            sync.Mutex
	health, ready map[string]Check
}

// AddHealthCheck adds a check to /healthz: when it fails, /healthz answers
// 500 with the check's name and error, and the kubelet restarts the
// container after the liveness probe's failureThreshold. Keep it cheap and
// about this process only (a deadlock, a wedged loop), not about the API
// server or other services: a restart does not fix those. Names are
// unique; checks may be added before or while the operator runs.
func (o *Operator) AddHealthCheck(name string, check Check) error {
	return o.checks.add(&o.checks.health, "AddHealthCheck", name, check)
}

// AddReadyCheck adds a check to /readyz: when it fails, /readyz answers
// 503 with the check's name and error, and the Pod leaves its Services'
// endpoints (the operator keeps working; readiness only gates traffic to
// the Pod, such as webhooks). Names are unique; checks may be added before
// or while the operator runs.
func (o *Operator) AddReadyCheck(name string, check Check) error {
	return o.checks.add(&o.checks.ready, "AddReadyCheck", name, check)
}

func (c *checks) add(m *map[string]Check, method, name string, check Check) error {
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
// failing: the operator works, in part. A fleet reports a cluster it
// cannot reach so, as the others still work.
func Degraded(err error) error { return degraded{err} }

type degraded struct{ error }

func (d degraded) Unwrap() error { return d.error }

// run runs the checks of m in name order and returns the first failure,
// naming the check. The notes are the errors of checks that returned
// Degraded, also by name.
func (c *checks) run(m *map[string]Check, r *http.Request) (notes []string, err error) {
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

// healthHandler serves /healthz: ok unless a user health check fails.
func (o *Operator) healthHandler(w http.ResponseWriter, r *http.Request) {
	notes, err := o.checks.run(&o.checks.health, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "ok")
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

// readyChecks runs the user readiness checks, after the built-in ones.
func (o *Operator) readyChecks(r *http.Request) ([]string, error) {
	return o.checks.run(&o.checks.ready, r)
}

// pprofMux serves net/http/pprof's handlers under /debug/pprof/.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// startPprof serves pprof on Options.PprofAddr when set.
func (o *Operator) startPprof(s *servers) error {
	if o.opts.PprofAddr == "" || o.opts.PprofAddr == "0" {
		return nil
	}
	addr, err := s.serve(o.opts.PprofAddr, pprofMux(), "Options.PprofAddr (--pprof-bind-address)")
	s.pprofAddr = addr
	if err == nil {
		o.log.Info("serving net/http/pprof", "address", addr+"/debug/pprof/")
	}
	return err
}

// PprofAddr returns the address net/http/pprof is served on once Run
// listens, or "" when off (the default) or not listening yet.
func (o *Operator) PprofAddr() string {
	return o.addr(func(s *servers) string { return s.pprofAddr })
}
