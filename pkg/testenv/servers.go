package testenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// startServers starts etcd and the apiserver, retrying with new ports when
// a free port chosen for them was taken before they bound it.
func (e *Environment) startServers(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := e.tryStartServers(ctx)
		if err == nil {
			return nil
		}
		conflict := e.etcd.bindConflict() || e.apiserver.bindConflict()
		pinned := e.opts.EtcdPort != 0 || e.opts.APIServerPort != 0
		if !conflict || pinned || attempt == 3 {
			return err
		}
		e.apiserver.stop(5 * time.Second)
		e.etcd.stop(5 * time.Second)
	}
}

func (e *Environment) tryStartServers(ctx context.Context) error {
	etcdPort, err := port(e.opts.EtcdPort, "EtcdPort")
	if err != nil {
		return err
	}
	peerPort, err := port(0, "")
	if err != nil {
		return err
	}
	apiPort, err := port(e.opts.APIServerPort, "APIServerPort")
	if err != nil {
		return err
	}
	e.etcdPort, e.peerPort, e.apiPort = etcdPort, peerPort, apiPort
	if e.etcd, err = e.startEtcd(etcdPort, peerPort); err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	if err := waitFor(ctx, e.etcd, func(ctx context.Context) error { return etcdHealthy(ctx, etcdURL) }); err != nil {
		return err
	}
	if e.apiserver, err = e.startAPIServer(apiPort, etcdURL); err != nil {
		return err
	}
	e.Config = e.adminConfig("https://127.0.0.1:" + strconv.Itoa(apiPort))
	e.clientset, err = kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	return waitFor(ctx, e.apiserver, e.apiserverReady)
}

func (e *Environment) startEtcd(clientPort, peerPort int) (*process, error) {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	return e.spawner.run("etcd", e.Binaries.Etcd, e.Dir,
		"--name=default",
		"--data-dir="+filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls="+client,
		"--advertise-client-urls="+client,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer,
		"--unsafe-no-fsync=true", // a throwaway cluster: durability buys nothing here
		"--log-level=warn",
	)
}

func (e *Environment) startAPIServer(port int, etcdURL string) (*process, error) {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none", // loopback cannot be a Service endpoint
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + e.creds.servingCert,
		"--tls-private-key-file=" + e.creds.servingKey,
		"--client-ca-file=" + e.creds.caFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + e.creds.saVerifyingKey,
		"--service-account-signing-key-file=" + e.creds.saSigningKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--profiling=false",
		"--cert-dir=" + filepath.Join(e.Dir, "apiserver-certs"),
	}
	if e.opts.Audit {
		audit, err := e.auditFlags()
		if err != nil {
			return nil, err
		}
		args = append(args, audit...)
	}
	return e.spawner.run("kube-apiserver", e.Binaries.APIServer, e.Dir, mergeFlags(args, e.opts.APIServerFlags)...)
}

func (e *Environment) startControllerManager() error {
	var err error
	e.kcm, err = e.spawner.run("kube-controller-manager", e.Binaries.ControllerManager, e.Dir,
		"--kubeconfig="+e.Kubeconfig,
		"--controllers="+strings.Join(e.opts.Controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--root-ca-file="+e.creds.caFile,
		"--service-account-private-key-file="+e.creds.saSigningKey,
		"--concurrent-gc-syncs=5",
	)
	return err
}

// Stop stops kube-controller-manager, then the apiserver, then etcd (the
// apiserver hangs on shutdown when etcd goes first), kills what is left of
// their process groups and removes the temporary directory. It is safe to
// call more than once and on a partly started environment. It takes
// seconds: the apiserver, which drains open watches for up to a minute on
// SIGTERM, is killed after stopGrace (its data is etcd's).
func (e *Environment) Stop() { e.stop(stopGrace) }

// stopGrace is how long a server may take to exit on SIGTERM before Stop
// kills it.
const stopGrace = 2 * time.Second

// stop stops the servers, giving each up to grace to exit on SIGTERM.
func (e *Environment) stop(grace time.Duration) {
	e.stopOnce.Do(func() {
		if e.shared != nil {
			e.leaveShared() // the servers are not this package's to stop
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.kcm.stop(grace)
		e.apiserver.stop(grace)
		e.etcd.stop(grace)
		if e.spawner != nil {
			e.spawner.close()
		}
		if e.ownDir {
			os.RemoveAll(e.Dir)
		}
	})
}

// StopAPIServer stops kube-apiserver (SIGTERM, SIGKILL after two
// seconds), leaving etcd and the controller manager running: clients see
// connection refused until StartAPIServer. For fault-injection tests.
func (e *Environment) StopAPIServer() {
	e.mustBePrivate("StopAPIServer")
	e.mu.Lock()
	defer e.mu.Unlock()
	e.apiserver.stop(stopGrace)
}

// StartAPIServer starts kube-apiserver again on the same port, with the
// same certificates and etcd, and waits until it is ready: Config and
// Kubeconfig stay valid.
func (e *Environment) StartAPIServer(ctx context.Context) error {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(e.etcdPort)
	return e.restart(ctx, "StartAPIServer", "kube-apiserver", &e.apiserver,
		func() (*process, error) { return e.startAPIServer(e.apiPort, etcdURL) }, e.apiserverReady)
}

// EtcdURL is the client URL of the control plane's etcd, for tests that
// read what the API server stored (etcd's JSON gateway, /v3/kv/range):
// the bytes of each object, in the version it is stored in. It is "" on
// the shared control plane, whose etcd is not e's: set Options.Private.
func (e *Environment) EtcdURL() string {
	if e.shared != nil || e.etcdPort == 0 {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(e.etcdPort)
}

// StopEtcd stops etcd (SIGTERM, SIGKILL after two seconds), leaving the
// apiserver running: it answers with errors until StartEtcd. For
// fault-injection tests.
func (e *Environment) StopEtcd() {
	e.mustBePrivate("StopEtcd")
	e.mu.Lock()
	defer e.mu.Unlock()
	e.etcd.stop(stopGrace)
}

// StartEtcd starts etcd again on the same ports and data directory and
// waits until it is healthy.
func (e *Environment) StartEtcd(ctx context.Context) error {
	url := "http://127.0.0.1:" + strconv.Itoa(e.etcdPort)
	return e.restart(ctx, "StartEtcd", "etcd", &e.etcd,
		func() (*process, error) { return e.startEtcd(e.etcdPort, e.peerPort) },
		func(ctx context.Context) error { return etcdHealthy(ctx, url) })
}

// restart starts the stopped server *p again with start, and waits until
// ready answers. method names the caller in errors.
func (e *Environment) restart(ctx context.Context, method, server string, p **process, start func() (*process, error), ready func(context.Context) error) error {
	e.mustBePrivate(method)
	e.mu.Lock()
	defer e.mu.Unlock()
	if *p != nil && (*p).running() {
		return fmt.Errorf("testenv: %s: %s is running; stop it first", method, server)
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	started, err := start()
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	*p = started
	return waitFor(ctx, started, ready)
}

// waitFor polls check until it succeeds, the process exits or ctx ends; the
// error carries the process's last log lines.
func waitFor(ctx context.Context, p *process, check func(context.Context) error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("testenv: %w", p.exitError())
		case <-ctx.Done():
			return fmt.Errorf("testenv: %s was not ready in time (%v; last check: %v); raise Options.StartTimeout on a slow machine\nlast lines of %s:\n%s",
				p.name, ctx.Err(), err, p.logPath, p.tail(50))
		case <-tick.C:
		}
	}
}

func etcdHealthy(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("%w: %s", errNotReady, body)
	}
	return nil
}

func (e *Environment) apiserverReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := e.clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("%w: %v %s", errNotReady, err, body)
	}
	return nil
}

// port returns want after checking it is free, or a free port when want is 0.
func port(want int, option string) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(want))
	if err != nil {
		return 0, fmt.Errorf("testenv: port %d on 127.0.0.1 is in use (%v): choose another for Options.%s, or 0 to pick a free one", want, err, option)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

const (
	dirPrefix = "opgen-testenv-"
	ownerFile = "owner.pid"
)
