package runtime

import (
	"fmt"
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
