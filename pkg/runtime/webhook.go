package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Webhook server modes (WebhookOptions.Mode).
const (
	// WebhookModeAuto is WebhookModeCluster in a Pod, else WebhookModeLocal.
	WebhookModeAuto = "auto"
	// WebhookModeCluster serves through the operator's webhook Service: the
	// runtime manages a CA and serving certificate in a Secret of the
	// operator's namespace and keeps the configurations' caBundle current
	// (or, with CertDir, serves mounted files, as from cert-manager).
	WebhookModeCluster = "cluster"
	// WebhookModeLocal is local development and tests: a certificate for
	// 127.0.0.1 made in memory, and the operator registers its webhook
	// configurations and conversion stanzas itself, with its own URL.
	WebhookModeLocal = "local"
)

// WebhookOptions configure the operator's webhook server, which package
// webhook starts when a kind registers an admission or conversion
// webhook. An operator without webhooks serves nothing.
type WebhookOptions struct {
	// Addr is where the webhook server listens (HTTPS). Default ":0", a
	// free port (local mode listens on 127.0.0.1); the generated
	// Deployment passes --webhook-bind-address=:9443, the port of the
	// webhook Service. "0" disables the server: the webhooks are not
	// served, and with failurePolicy Fail the API server rejects the
	// requests they guard.
	Addr string

	// CertDir holds tls.crt and tls.key (and ca.crt), the certificate
	// mounted from a Secret, as cert-manager writes it; reloaded when the
	// files change. Default "": the runtime makes the certificate (Mode).
	CertDir string

	// Mode is where the operator runs: WebhookModeAuto (the default),
	// WebhookModeCluster or WebhookModeLocal.
	Mode string
}

func (w WebhookOptions) complete() (WebhookOptions, error) {
	w.Addr = orDefault(w.Addr, ":0")
	w.Mode = orDefault(w.Mode, WebhookModeAuto)
	switch w.Mode {
	case WebhookModeAuto, WebhookModeCluster, WebhookModeLocal:
		return w, nil
	}
	return w, fmt.Errorf("runtime.New: Options.Webhook.Mode (--webhook-mode) is %q; use %q, %q or %q", w.Mode, WebhookModeAuto, WebhookModeCluster, WebhookModeLocal)
}

// AddReplicaRunnable adds r to the servers every replica runs, whether it leads or
// not: the webhook server is one, as the API server calls any replica
// behind the webhook Service. Unlike the Runnables of AddLeaderRunnable, r runs once per
// Run: it starts before the caches sync (a conversion webhook must answer
// the informers' lists) and its context ends only after the workers
// drained at shutdown, so their last writes are still admitted. An error
// r returns before then stops the operator: Run returns it. It must be
// called before Run.
func (o *Operator) AddReplicaRunnable(r Runnable) error {
	if r == nil {
		return errors.New("runtime: Operator.AddReplicaRunnable: the Runnable is nil")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return errors.New("runtime: Operator.AddReplicaRunnable: the operator already runs; add every server before Run")
	}
	o.replicaServers = append(o.replicaServers, r)
	return nil
}

// startReplicaServers runs the Runnables of AddReplicaRunnable until the returned
// stop is called. The returned context is ctx, cancelled too when a server
// fails; stop waits for the servers to return and puts the failure in
// *runErr unless it holds an error already.
func (o *Operator) startReplicaServers(ctx context.Context) (context.Context, func(runErr *error)) {
	o.mu.Lock()
	rs := o.replicaServers
	o.mu.Unlock()
	if len(rs) == 0 {
		return ctx, func(*error) {}
	}
	ctx, fail := context.WithCancelCause(ctx)
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, r := range rs {
		wg.Go(func() {
			err := o.runServer(serveCtx, r)
			if err == nil || serveCtx.Err() != nil {
				return
			}
			mu.Lock()
			if first == nil {
				first = fmt.Errorf("runtime: server %T stopped: %w", r, err)
				fail(first)
			}
			mu.Unlock()
		})
	}
	return ctx, func(runErr *error) {
		stopServing()
		wg.Wait()
		fail(nil)
		mu.Lock()
		defer mu.Unlock()
		if first != nil && *runErr == nil {
			*runErr = first
		}
	}
}

// runServer runs r and turns a panic into an error.
func (o *Operator) runServer(ctx context.Context, r Runnable) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.Run(ctx)
}
