// Command demo shows hello-operator at work on a local control plane, with
// nothing installed but Go: `make demo` from the repository root.
//
// It builds the control plane when missing, starts it, installs the
// operator's generated manifest, builds the operator's image as `opgen
// image` does and runs the binary the image holds as its own
// ServiceAccount, creates two Greetings and shows with kubectl what the
// operator made of them, changes one, deletes the other, and stops
// everything. Ctrl-C stops it at any point.
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

const (
	operatorName = "hello-operator"
	operatorNS   = "hello-operator-system"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo holds what the steps share.
type demo struct {
	env     *testenv.Environment
	dir     string // the hello-operator example
	work    string // scratch files
	kubectl string
	metrics string // the operator's metrics address (HTTPS)
	health  string // the operator's health address
}

func run(ctx context.Context) error {
	dir, err := exampleDir()
	if err != nil {
		return err
	}
	d := &demo{dir: dir}
	step("Starting a local control plane: etcd, kube-apiserver, kube-controller-manager (built on first use, about 5-10 minutes once)")
	// The CRD goes in before the controller manager starts, so that its
	// garbage collector knows Greetings from the start; the manifest applied
	// below leaves it unchanged.
	d.env = testenv.New(testenv.Options{
		ControllerManager: true,
		CRDDirs:           []string{filepath.Join(dir, "config", "crd")},
		Output:            os.Stdout,
	})
	if err := d.env.Start(ctx); err != nil {
		return err
	}
	defer func() {
		step("Stopping the control plane")
		d.env.Stop()
	}()
	d.work, d.kubectl = d.env.Dir, d.env.Binaries.Kubectl
	fmt.Printf("    API server %s, kubeconfig %s\n", d.env.Config.Host, d.env.Kubeconfig)
	note("There is no kubelet here: a stand-in binds pods to a fake node and reports them Running and Ready, so readiness can flow back to the operator.")
	if err := d.env.RunFakeKubelet(ctx, nil); err != nil {
		return err
	}
	return d.steps(ctx)
}

func (d *demo) steps(ctx context.Context) error {
	if err := d.install(ctx); err != nil {
		return err
	}
	bin, err := d.operatorBinary(ctx)
	if err != nil {
		return err
	}
	stopOperator, err := d.startOperator(ctx, bin)
	if err != nil {
		return err
	}
	defer stopOperator()
	for _, s := range []func(context.Context) error{d.createGreetings, d.show, d.update, d.delete} {
		if err := s(ctx); err != nil {
			return err
		}
	}
	return stopOperator()
}

// install applies the manifest `opgen manifests` writes (CRD, ServiceAccount,
// RBAC), without the Deployment: the operator runs from here.
func (d *demo) install(ctx context.Context) error {
	step("Installing what `opgen manifests` writes from config/: the Greeting CRD, a ServiceAccount and its least-privilege RBAC")
	data, err := manifest.Build(manifest.Options{Name: operatorName, Namespace: operatorNS, ConfigDir: filepath.Join(d.dir, "config")})
	if err != nil {
		return err
	}
	path := filepath.Join(d.work, "hello-operator.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	if err := d.run(ctx, "apply", "--server-side", "-f", path); err != nil {
		return err
	}
	return d.run(ctx, "wait", "--for=condition=Established", "crd/greetings.hello.example.com", "--timeout=60s")
}

// startOperator runs the hello-operator binary bin as its ServiceAccount.
func (d *demo) startOperator(ctx context.Context, bin string) (stop func() error, err error) {
	step("Running it as hello-operator's ServiceAccount (every API call it makes is checked against the generated RBAC)")
	cfg, err := d.env.ServiceAccountConfig(ctx, operatorNS, operatorName)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(d.work, "operator.kubeconfig")
	if err := d.env.WriteKubeconfig(cfg, kubeconfig); err != nil {
		return nil, err
	}
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(d.work, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--metrics-bind-address", metrics, "--health-probe-bind-address", health)
	cmd.Env = append(os.Environ(), "OPGEN_POD_NAMESPACE="+operatorNS)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fmt.Printf("    $ %s --kubeconfig operator.kubeconfig --metrics-bind-address %s --health-probe-bind-address %s\n", operatorName, metrics, health)
	fmt.Printf("    logs: %s\n", logPath)
	d.metrics, d.health = metrics, health
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := waitReady(ctx, health, done); err != nil {
		return nil, fmt.Errorf("%w; its log:\n%s", err, tail(logPath, 20))
	}
	stopped := false
	return func() error {
		if stopped {
			return nil
		}
		stopped = true
		step("Stopping hello-operator with SIGTERM: it finishes in-flight work and releases its lease")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := <-done
		fmt.Println(indent(tail(logPath, 4)))
		logFile.Close()
		return err
	}, nil
}

const greetings = `apiVersion: hello.example.com/v1
kind: Greeting
metadata:
  name: hello
spec:
  greeting: Hello from opgen
---
apiVersion: hello.example.com/v1
kind: Greeting
metadata:
  name: world
spec:
  greeting: Hello, world
`

func (d *demo) createGreetings(ctx context.Context) error {
	step("Creating two Greetings")
	fmt.Print(indent(greetings))
	path := filepath.Join(d.work, "greetings.yaml")
	if err := os.WriteFile(path, []byte(greetings), 0o600); err != nil {
		return err
	}
	if err := d.run(ctx, "apply", "-f", path); err != nil {
		return err
	}
	step("Waiting until both report Ready (the operator reads the Deployments' ready replicas)")
	return d.run(ctx, "wait", "--for=condition=Ready", "greeting/hello", "greeting/world", "--timeout=120s")
}

func (d *demo) show(ctx context.Context) error {
	step("What the operator made: a Deployment (and through it a ReplicaSet and pods) and a Service per Greeting")
	if err := d.run(ctx, "get", "greetings,deployments,replicasets,services,pods", "-o", "wide"); err != nil {
		return err
	}
	step("The Greeting: its status is written by the operator with server-side apply")
	if err := d.run(ctx, "get", "greeting", "hello", "-o", "yaml"); err != nil {
		return err
	}
	step("The Events: the operator's, the controller manager's and the fake kubelet's")
	if err := d.run(ctx, "events"); err != nil {
		return err
	}
	return d.showMetrics(ctx)
}

func (d *demo) update(ctx context.Context) error {
	step("Changing Greeting hello: Modify runs and the Deployment gets the new text")
	if err := d.run(ctx, "patch", "greeting", "hello", "--type=merge", "-p", `{"spec":{"greeting":"Bonjour from opgen"}}`); err != nil {
		return err
	}
	if err := d.run(ctx, "wait", "--for=jsonpath={.status.observedGeneration}=2", "greeting/hello", "--timeout=60s"); err != nil {
		return err
	}
	return d.run(ctx, "get", "deployment", "hello", "-o", "jsonpath={.spec.template.spec.containers[0].env}{\"\\n\"}")
}

func (d *demo) delete(ctx context.Context) error {
	step("Deleting Greeting world: the garbage collector removes what it owned")
	if err := d.run(ctx, "delete", "greeting", "world", "--wait=true"); err != nil {
		return err
	}
	if err := d.run(ctx, "wait", "--for=delete", "deployment/world", "service/world", "--timeout=60s"); err != nil {
		return err
	}
	return d.run(ctx, "get", "greetings,deployments,services")
}

// run prints and runs a kubectl command against the local control plane.
func (d *demo) run(ctx context.Context, args ...string) error {
	fmt.Printf("    $ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, d.kubectl, append([]string{"--kubeconfig", d.env.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	fmt.Print(indent(string(out)))
	if err != nil {
		return fmt.Errorf("kubectl %s: %w", args[0], err)
	}
	return nil
}

// goBuild builds the main package in dir into bin.
func goBuild(ctx context.Context, dir, bin string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir, build.Stdout, build.Stderr = dir, os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build hello-operator: %w", err)
	}
	return nil
}

func step(s string) { fmt.Printf("\n==> %s\n", s) }
func note(s string) { fmt.Printf("    (%s)\n", s) }

func indent(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "      " + strings.Join(lines, "\n      ") + "\n"
}

// exampleDir finds examples/hello-operator from the working directory: the
// repository root (make demo) or the example itself.
func exampleDir() (string, error) {
	for _, dir := range []string{"examples/hello-operator", "."} {
		if _, err := os.Stat(filepath.Join(dir, "config", "crd")); err == nil {
			return filepath.Abs(dir)
		}
	}
	return "", fmt.Errorf("run the demo from the repository root (make demo) or from examples/hello-operator")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitReady polls the operator's /readyz until it answers 200, the
// operator exits or a minute passes.
func waitReady(ctx context.Context, addr string, exited <-chan error) error {
	deadline := time.After(time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Printf("    $ curl http://%s/readyz   # 200: caches synced, leader elected\n", addr)
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("hello-operator exited: %v", err)
		case <-deadline:
			return fmt.Errorf("hello-operator was not ready within a minute")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// showMetrics scrapes the operator's secure metrics: refused without a
// token, served to a ServiceAccount bound to the generated
// hello-operator-metrics-reader ClusterRole.
func (d *demo) showMetrics(ctx context.Context) error {
	step("Its metrics are HTTPS and need a token the API server accepts and authorizes: without one, 401")
	code, _, err := d.scrape(ctx, "")
	if err != nil {
		return err
	}
	fmt.Printf("    $ curl -k https://%s/metrics   # %d %s\n", d.metrics, code, http.StatusText(code))
	step("A ServiceAccount bound to the generated " + operatorName + "-metrics-reader ClusterRole (get on /metrics) may scrape them")
	user := "system:serviceaccount:" + operatorNS + ":scraper"
	for _, args := range [][]string{
		{"create", "serviceaccount", "scraper", "-n", operatorNS},
		{"create", "clusterrolebinding", operatorName + "-metrics-scraper", "--clusterrole=" + operatorName + "-metrics-reader", "--serviceaccount=" + operatorNS + ":scraper"},
	} {
		if err := d.run(ctx, args...); err != nil {
			return err
		}
	}
	if err := d.waitAllowed(ctx, user); err != nil {
		return err
	}
	token, err := d.output(ctx, "create", "token", "scraper", "-n", operatorNS)
	if err != nil {
		return err
	}
	code, body, err := d.scrape(ctx, strings.TrimSpace(token))
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("scrape as %s: %d %s", user, code, body)
	}
	const prefix = "opgen_reconcile_total{"
	fmt.Printf("    $ curl -k -H \"Authorization: Bearer $(kubectl create token scraper -n %s)\" https://%s/metrics | grep %s\n", operatorNS, d.metrics, prefix)
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
	}
	fmt.Print(indent(strings.Join(lines, "\n")))
	return nil
}

// waitAllowed waits until the API server's RBAC lets user get /metrics:
// the operator caches a denial for 30 seconds.
func (d *demo) waitAllowed(ctx context.Context, user string) error {
	deadline := time.After(30 * time.Second)
	for {
		out, _ := d.output(ctx, "auth", "can-i", "get", "/metrics", "--as="+user)
		if strings.TrimSpace(out) == "yes" {
			fmt.Printf("    $ kubectl auth can-i get /metrics --as=%s\n      yes\n", user)
			return nil
		}
		select {
		case <-deadline:
			return fmt.Errorf("%s may still not get /metrics after 30s: the ClusterRoleBinding did not take effect", user)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scrape gets the operator's /metrics with token ("" for none). The
// certificate is the operator's self-signed one: the token is what counts.
func (d *demo) scrape(ctx context.Context, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+d.metrics+"/metrics", nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// output runs a kubectl command against the local control plane and
// returns its standard output, printing nothing.
func (d *demo) output(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, d.kubectl, append([]string{"--kubeconfig", d.env.Kubeconfig}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w", args[0], err)
	}
	return string(out), nil
}
