// Package devcmd is opgen dev's command line: its options, flags and
// help. It links no control plane, so that the opgen command prints
// opgen dev --help without building cmd/opgen/dev, which parses the same
// flags and runs the control plane (package dev).
package devcmd

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
)

// Options are opgen dev's settings.
type Options struct {
	// CRDDirs are directories of CRD manifests to install at start-up.
	CRDDirs []string
	// Kubeconfig is a path to write the kubeconfig to, as well.
	Kubeconfig string
	// NoControllerManager leaves kube-controller-manager out;
	// NoFakeKubelet leaves Pods pending.
	NoControllerManager, NoFakeKubelet bool
	// Port is the apiserver's port on 127.0.0.1; 0 picks a free one.
	Port int
	// Webhooks, when set, is a file of webhook configurations (what
	// +kubebuilder:webhook markers make) to create, calling a webhook
	// server of the project's own on 127.0.0.1:WebhookPort.
	Webhooks string
	// WebhookPort is the port of that server: controller-runtime's 9443 by
	// default.
	WebhookPort int
	// WebhookCertDir receives the server's certificate, tls.crt and
	// tls.key: by default where controller-runtime reads it.
	WebhookCertDir string
	// Project is kubebuilder's PROJECT file, whose kinds with a conversion
	// webhook get it in their CRDs.
	Project string
}

// DefaultWebhookCertDir is where controller-runtime's webhook server looks
// for its certificate unless told otherwise.
var DefaultWebhookCertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")

// Short is opgen dev's one-line help.
const Short = "Run a local Kubernetes control plane in the foreground until Ctrl-C"

// Long is opgen dev's help.
const Long = `Starts etcd, kube-apiserver and kube-controller-manager on loopback, with
authentication and RBAC on, builds them first when missing, and prints the
kubeconfig to use. Ctrl-C stops everything. There is no kubelet and no
container runs: unless --no-fake-kubelet, a stand-in binds pending Pods to a
fake Node and reports them Running and Ready, so that Deployments become
available and operators that wait for readiness can be tried.

With --webhooks, a kubebuilder project's webhooks run too: the API server
calls the manager's webhook server on 127.0.0.1 (make run), with a
certificate opgen dev writes where controller-runtime reads it; the kinds
PROJECT gives a conversion webhook convert through it.

It writes: the kubeconfig (and a copy at --kubeconfig), the control
plane's data in a temporary directory removed at the end, and with
--webhooks the certificate in --webhook-cert-dir.`

// Register defines opgen dev's flags on f, into o.
func Register(f *pflag.FlagSet, o *Options) {
	f.StringSliceVar(&o.CRDDirs, "crds", nil, "directories of CRD manifests to install at start-up")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "also write the kubeconfig to this path")
	f.BoolVar(&o.NoControllerManager, "no-controller-manager", false, "do not run kube-controller-manager")
	f.IntVar(&o.Port, "port", 0, "apiserver port on 127.0.0.1 (0 picks a free one)")
	f.BoolVar(&o.NoFakeKubelet, "no-fake-kubelet", false, "leave Pods pending instead of reporting them Running and Ready")
	f.StringVar(&o.Webhooks, "webhooks", "", "a file of webhook configurations to create (config/webhook/manifests.yaml), each calling the project's own webhook server on 127.0.0.1 (make run) in the place of its Service")
	f.IntVar(&o.WebhookPort, "webhook-port", 9443, "the port of the project's webhook server (controller-runtime's default)")
	f.StringVar(&o.WebhookCertDir, "webhook-cert-dir", DefaultWebhookCertDir, "where to write the webhook server's certificate for 127.0.0.1 (tls.crt, tls.key): controller-runtime reads it here by default")
	f.StringVar(&o.Project, "project", "PROJECT", "kubebuilder's PROJECT file: its kinds with a conversion webhook get it in their CRDs, calling the same server (with --webhooks)")
}

// WantsHelp says whether args, opgen dev's unparsed arguments, ask for
// help: -h or --help before a "--".
func WantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help":
			return true
		}
	}
	return false
}
