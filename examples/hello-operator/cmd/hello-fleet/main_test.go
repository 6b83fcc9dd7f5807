package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	hellov1 "github.com/opgen-sdk/opgen/examples/hello-operator/apis/hello/v1"
	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
	"github.com/opgen-sdk/opgen/examples/hello-operator/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/optest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

const (
	operator  = "hello-operator"
	namespace = operator + "-system" // of the member manifest
	identity  = "system:serviceaccount:" + namespace + ":" + operator
)

// home is the home cluster, a member too, with the CRDs installed by the
// test environment; east and west are member clusters that get nothing
// but the generated member manifest, and log every request (audit).
var (
	home    *testenv.Environment
	members = map[string]*testenv.Environment{}
	audits  = map[string]string{}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "hello-fleet-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	home = testenv.New(testenv.Options{CRDDirs: []string{"../../config/crd"}, Private: true})
	for _, name := range []string{"east", "west"} {
		audits[name] = filepath.Join(dir, name+".log")
		members[name] = testenv.New(testenv.Options{
			Private: true,
			// The token controller fills the member manifest's token Secret.
			ControllerManager: true, Controllers: []string{"serviceaccount-token-controller"},
			APIServerFlags: []string{"--audit-policy-file=" + policy, "--audit-log-path=" + audits[name]},
		})
	}
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for name, e := range map[string]*testenv.Environment{"home": home, "east": members["east"], "west": members["west"]} {
		wg.Go(func() {
			if err := e.Start(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("start the %s control plane: %w", name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	defer home.Stop()
	for _, e := range members {
		defer e.Stop()
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// TestGreetingsInThreeClusters runs hello-operator's controller in three
// clusters from one process: the home cluster, and two members engaged
// from Secrets while it runs, whose kubeconfigs carry the token of the
// ServiceAccount of the generated member manifest
// (deploy/hello-operator-member.yaml). Each cluster's Greeting gets its
// Deployment and Service there and nowhere else, and no request of the
// operator's identity in a member was forbidden.
func TestGreetingsInThreeClusters(t *testing.T) {
	ctx := context.Background()
	member, err := os.ReadFile("../../deploy/hello-operator-member.yaml")
	require.NoError(t, err)
	fresh, err := manifest.Build(manifest.Options{Name: operator, Namespace: namespace, ConfigDir: "../../config", Member: true})
	require.NoError(t, err)
	require.Equal(t, string(fresh), string(member), "deploy/hello-operator-member.yaml is stale: run make manifests")

	secrets := home.Namespace(t)
	f, err := fleet.New(home.Config, fleet.Options{
		Options: runtime.Options{Name: operator, Logger: testr.New(t), MetricsAddr: "0", HealthAddr: "0",
			LeaderElection: runtime.LeaderElectionOptions{Disabled: true}},
		Clusters:    fleet.Secrets{Namespace: secrets},
		HomeCluster: "home",
	}, controller.Setup)
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done, "the fleet's Run")
	}()

	clusters := map[string]*testenv.Environment{"home": home}
	for name, e := range members {
		require.NoError(t, optest.Apply(ctx, e.Config, member), "apply the member manifest to %s", name)
		_, err := home.Clientset().CoreV1().Secrets(secrets).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + name, Labels: map[string]string{fleet.DefaultClusterLabel: name}},
			Data:       map[string][]byte{"kubeconfig": tokenKubeconfig(t, e)},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		clusters[name] = e
	}
	for name, e := range clusters {
		_, err := e.Clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "greetings"}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		_, err = versioned.NewForConfigOrDie(e.Config).HelloV1().Greetings("greetings").Create(ctx, &hellov1.Greeting{
			ObjectMeta: metav1.ObjectMeta{Name: "hello-" + name},
			Spec:       hellov1.GreetingSpec{Greeting: "Hello from " + name},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for name, e := range clusters {
		greetings := versioned.NewForConfigOrDie(e.Config).HelloV1().Greetings("greetings")
		owner := optest.WaitFor(t, name+"'s Greeting's status written", func(ctx context.Context) (*hellov1.Greeting, error) {
			return greetings.Get(ctx, "hello-"+name, metav1.GetOptions{})
		}, func(g *hellov1.Greeting) bool { return g.Status.ObservedGeneration == 1 })
		cs := e.Clientset()
		optest.WaitForOwned(t, owner, func(ctx context.Context) (*appsv1.Deployment, error) {
			return cs.AppsV1().Deployments("greetings").Get(ctx, "hello-"+name, metav1.GetOptions{})
		})
		optest.WaitForOwned(t, owner, func(ctx context.Context) (*corev1.Service, error) {
			return cs.CoreV1().Services("greetings").Get(ctx, "hello-"+name, metav1.GetOptions{})
		})
	}
	for name, e := range clusters {
		list, err := e.Clientset().AppsV1().Deployments("greetings").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, list.Items, 1, "%s has the Deployment of its own Greeting only", name)
		assert.Equal(t, "hello-"+name, list.Items[0].Name)
	}
	assert.ElementsMatch(t, []string{"east", "home", "west"}, f.Clusters())

	for name := range members {
		requests, forbidden := audited(t, audits[name])
		t.Logf("%s: %d requests of %s, %d forbidden", name, requests, identity, len(forbidden))
		assert.NotZero(t, requests, "%s's audit log has requests of %s", name, identity)
		assert.Empty(t, forbidden, "requests of %s that %s forbade: grant them with +kubebuilder:rbac markers", identity, name)
	}
}

// tokenKubeconfig is the kubeconfig of cluster e that authenticates with
// the token of the member manifest's token Secret, once the token
// controller has filled it in.
func tokenKubeconfig(t *testing.T, e *testenv.Environment) []byte {
	t.Helper()
	var token []byte
	optest.Eventually(t, "the token controller fills in the member token Secret", func(ctx context.Context) (bool, error) {
		s, err := e.Clientset().CoreV1().Secrets(namespace).Get(ctx, manifest.MemberTokenSecret(operator), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = s.Data[corev1.ServiceAccountTokenKey]
		return len(token) > 0, nil
	}, optest.Within(60*time.Second))
	cfg, err := clientcmd.LoadFromFile(e.Kubeconfig)
	require.NoError(t, err)
	for _, auth := range cfg.AuthInfos {
		auth.ClientCertificate, auth.ClientKey, auth.ClientCertificateData, auth.ClientKeyData = "", "", nil, nil
		auth.Token = string(token)
	}
	data, err := clientcmd.Write(*cfg)
	require.NoError(t, err)
	return data
}

// audited counts the requests of the operator's identity in an audit log
// and returns those the API server answered with 403.
func audited(t *testing.T, path string) (requests int, forbidden []string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			URI   string `json:"requestURI"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		if ev.User.Username != identity || ev.Stage != "ResponseComplete" {
			continue
		}
		requests++
		if ev.ResponseStatus.Code == 403 {
			forbidden = append(forbidden, ev.Verb+" "+ev.URI)
		}
	}
	require.NoError(t, sc.Err())
	return requests, forbidden
}
