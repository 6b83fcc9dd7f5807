package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// Stale registrations
//
// The operator's two configurations outlive the process: local mode leaves
// them at shutdown, a manifest installs them in a cluster. An operator
// that starts without its webhooks (--webhook-bind-address=0), or serves
// fewer than its configurations call, would leave the API server calling
// webhooks nobody serves: with failurePolicy Fail every write they guard
// is refused, while /readyz says 200. So the server reads its two
// configurations (by name) at start and every recheck:
//
//   - in local mode it deletes a configuration that calls only webhooks
//     it does not serve and that a local run registered (its webhooks
//     call a URL) that is no longer alive (nothing answers at the URL);
//     one that reaches a Service belongs to a deployment, and one that a
//     live process serves belongs to that process: both are left alone;
//   - in cluster mode the manifest owns them: readiness fails and names
//     each webhook not served, with the way out.
//
// Readiness waits for the first check. A check the API server refuses
// (Forbidden or Unauthorized) cannot tell: readiness passes, Degraded,
// naming the permission, and the check is retried with a backoff from
// 200ms up to deniedRetry, for as long as it is refused: a starting API
// server's authorizer refuses what the role grants for a moment, and a
// role may be granted later. It once took the first refusal as its last
// word. opgen_webhook_configuration_checks_total counts each outcome.

// deniedRetry caps the backoff of a refused check; a variable for the
// tests.
var deniedRetry = time.Minute

// The outcomes of a check, as opgen_webhook_configuration_checks_total
// counts them.
const (
	checkClean  = "clean"  // every configuration calls only served webhooks
	checkStale  = "stale"  // cluster mode: some call webhooks not served
	checkDenied = "denied" // the API server refused the read
	checkError  = "error"  // the read failed otherwise
)

// deniedError is a check the API server refused: the role lacks get on
// the configurations, or the server's authorizer is not ready yet.
type deniedError struct{ err error }

func (e *deniedError) Error() string {
	return "cannot read the operator's webhook configurations to find stale ones: " + e.err.Error() + "; grant get on validatingwebhookconfigurations and mutatingwebhookconfigurations (opgen manifests does)"
}

func (e *deniedError) Unwrap() error { return e.err }

// registrationCheck is the outcome of the last check of the
// configurations.
type registrationCheck struct {
	mu      sync.Mutex
	checked bool
	stale   error  // cluster mode: the configurations that call webhooks not served
	denied  error  // the check lacks permission: /readyz shows it, Degraded
	last    string // the last outcome logged, to log changes only
	noted   map[string]bool
}

func (c *registrationCheck) set(stale error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked, c.stale, c.denied = true, stale, nil
}

// outcome is the last successful check's, as the metric counts it.
func (c *registrationCheck) outcome() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale != nil {
		return checkStale
	}
	return checkClean
}

// deny records that the check lacks permission: readiness no longer waits
// for it, and shows why it cannot tell.
func (c *registrationCheck) deny(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked, c.denied = true, err
}

// done reports whether a check succeeded once.
func (c *registrationCheck) done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

// ready is the readiness of the configurations: nil once checked and
// clean. A check that lacks permission is ready, and with degraded it
// says so (runtime.Degraded, which /readyz shows without failing).
func (c *registrationCheck) ready(degraded bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.checked:
		return errors.New("the webhook configurations are not checked yet")
	case c.stale == nil && c.denied != nil && degraded:
		return runtime.Degraded(c.denied)
	}
	return c.stale
}

// once reports whether note is new: what is logged once per process.
func (c *registrationCheck) once(note string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.noted[note] {
		return false
	}
	if c.noted == nil {
		c.noted = map[string]bool{}
	}
	c.noted[note] = true
	return true
}

// changed reports whether outcome differs from the last one logged.
func (c *registrationCheck) changed(outcome string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if outcome == c.last {
		return false
	}
	c.last = outcome
	return true
}

// watchRegistrations checks the configurations now and every recheck
// (localRecheck) until ctx ends; failed checks are retried with a backoff.
// Until the first check succeeds, readiness waits for it, so the backoff
// stays under a second: an operator started during an outage of the API
// server (runtime.Main runs it again after a lost lease) is ready within a
// second of the server's return, not after a backoff grown to 10s.
//
// A refused check (Forbidden, Unauthorized) does not hold readiness
// (deny) and is retried with a backoff capped at deniedRetry.
func (s *server) watchRegistrations(ctx context.Context) {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
	deniedBackoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: deniedRetry}
	for ctx.Err() == nil {
		next := s.recheck
		err := s.checkRegistrations(ctx)
		var denied *deniedError
		switch {
		case ctx.Err() != nil:
		case err == nil:
			backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
			deniedBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: deniedRetry}
			s.metrics.checks.WithLabelValues(s.checks.outcome()).Inc()
		case errors.As(err, &denied):
			s.metrics.checks.WithLabelValues(checkDenied).Inc()
			s.checks.deny(err)
			next = deniedBackoff.Step()
			if s.checks.changed(err.Error()) {
				s.log.Error(err, "checking the webhook configurations; retrying", "retryIn", next)
			}
		default:
			s.metrics.checks.WithLabelValues(checkError).Inc()
			next = backoff.Step()
			if !s.checks.done() {
				next = min(next, time.Second)
			}
			if s.checks.changed(err.Error()) {
				s.log.Error(err, "checking the webhook configurations; retrying", "retryIn", next)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(next):
		}
	}
}

// servedNames are the names of the admission webhooks this server serves:
// none when it is disabled.
func (s *server) servedNames() []string {
	if s.opts.Addr == "0" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, h := range s.hooks {
		out = append(out, h.Name())
	}
	return out
}

// configuration is what the check needs of a Validating or
// MutatingWebhookConfiguration.
type configuration struct {
	kind, name, resourceVersion string
	uid                         types.UID
	webhooks                    []string                                      // names
	clients                     []admissionregistrationv1.WebhookClientConfig // of each webhook
}

// checkRegistrations checks the two configurations once and records the
// outcome; it returns what kept it from checking.
func (s *server) checkRegistrations(ctx context.Context) error {
	served := s.servedNames()
	var stale []string
	for _, get := range []func(context.Context) (*configuration, error){s.validatingConfiguration, s.mutatingConfiguration} {
		c, err := get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
			return &deniedError{err}
		case err != nil:
			return err
		}
		var notServed []string
		for _, w := range c.webhooks {
			if !slices.Contains(served, w) {
				notServed = append(notServed, w)
			}
		}
		if len(notServed) == 0 {
			continue
		}
		if s.mode != runtime.WebhookModeLocal {
			stale = append(stale, fmt.Sprintf("%s %s (%s)", c.kind, c.name, strings.Join(notServed, ", ")))
			continue
		}
		if err := s.removeLocal(ctx, c, len(notServed) == len(c.webhooks)); err != nil {
			return err
		}
	}
	var err error
	if len(stale) > 0 {
		how := "serves none of them (--webhook-bind-address=0)"
		if s.opts.Addr != "0" {
			how = "does not serve these webhooks"
		}
		err = fmt.Errorf("the API server calls webhooks of this operator that it %s: %s; with failurePolicy Fail every write they guard is refused: run the operator with its webhooks, or delete what is not served (kubectl delete validatingwebhookconfiguration/mutatingwebhookconfiguration <name>)", how, strings.Join(stale, "; "))
		if s.checks.changed(err.Error()) {
			s.log.Error(err, "stale webhook configurations: not ready")
		}
	} else if s.checks.changed("clean") {
		s.log.V(1).Info("the webhook configurations call only webhooks this operator serves")
	}
	s.checks.set(err)
	return nil
}

// removeLocal deletes c, a configuration whose webhooks this operator,
// run locally, does not serve (all of them when unserved is true), if a
// local run registered it. A partly served one is left to registerLocally,
// whose apply drops the webhooks it no longer lists.
func (s *server) removeLocal(ctx context.Context, c *configuration, unserved bool) error {
	if !unserved {
		return nil
	}
	for _, cc := range c.clients {
		if cc.Service != nil {
			if s.checks.once("service " + c.name) {
				s.log.Info("a webhook configuration of this operator reaches it through a Service, so it belongs to a deployment: left in place", "kind", c.kind, "name", c.name, "service", cc.Service.Namespace+"/"+cc.Service.Name)
			}
			return nil
		}
	}
	for _, cc := range c.clients {
		if cc.URL != nil && answers(*cc.URL) {
			if s.checks.once("live " + c.name + " " + *cc.URL) {
				s.log.Info("a webhook configuration of this operator calls a live process, another run of it: left in place", "kind", c.kind, "name", c.name, "url", *cc.URL)
			}
			return nil
		}
	}
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &c.uid, ResourceVersion: &c.resourceVersion}}
	api := s.client.AdmissionregistrationV1()
	var err error
	if c.kind == "MutatingWebhookConfiguration" {
		err = api.MutatingWebhookConfigurations().Delete(ctx, c.name, opts)
	} else {
		err = api.ValidatingWebhookConfigurations().Delete(ctx, c.name, opts)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the stale %s %s, which calls webhooks this operator does not serve: %w", c.kind, c.name, err)
	}
	s.log.Info("removed a webhook configuration a local run registered: this operator does not serve its webhooks, and the API server would refuse every write they guard", "kind", c.kind, "name", c.name, "webhooks", c.webhooks)
	return nil
}

func (s *server) validatingConfiguration(ctx context.Context) (*configuration, error) {
	v, err := s.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, ValidatingConfigurationName(s.operator), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	c := &configuration{kind: "ValidatingWebhookConfiguration", name: v.Name, uid: v.UID, resourceVersion: v.ResourceVersion}
	for _, w := range v.Webhooks {
		c.webhooks, c.clients = append(c.webhooks, w.Name), append(c.clients, w.ClientConfig)
	}
	return c, nil
}

func (s *server) mutatingConfiguration(ctx context.Context) (*configuration, error) {
	m, err := s.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, MutatingConfigurationName(s.operator), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	c := &configuration{kind: "MutatingWebhookConfiguration", name: m.Name, uid: m.UID, resourceVersion: m.ResourceVersion}
	for _, w := range m.Webhooks {
		c.webhooks, c.clients = append(c.webhooks, w.Name), append(c.clients, w.ClientConfig)
	}
	return c, nil
}
