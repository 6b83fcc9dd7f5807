package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
)

// hello is hello-operator's committed config.
var hello = rbacaudit.Options{Name: "hello-operator", ConfigDir: "../../../../examples/hello-operator/config"}

// A request of hello-operator's ServiceAccount its roles allow (the list
// of its Greetings), and one they forbid (a delete of a Pod).
const (
	allowed   = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"1","stage":"ResponseComplete","requestURI":"/apis/hello.example.com/v1/greetings","verb":"list","user":{"username":"system:serviceaccount:hello-operator-system:hello-operator"},"objectRef":{"resource":"greetings","apiGroup":"hello.example.com","apiVersion":"v1"},"responseStatus":{"code":200}}`
	forbidden = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"2","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/pods/p","verb":"delete","user":{"username":"system:serviceaccount:hello-operator-system:hello-operator"},"objectRef":{"resource":"pods","namespace":"ns","name":"p","apiVersion":"v1"},"responseStatus":{"code":403}}`
)

func logFile(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

// TestFailOnMissing: with --fail-on-missing a forbidden request is an
// error that says how to grant it; without, the report alone says it.
func TestFailOnMissing(t *testing.T) {
	t.Parallel()
	log := logFile(t, allowed, forbidden)
	var out strings.Builder
	err := Run(context.Background(), Options{Logs: []string{log}, Operator: hello, FailOnMissing: true, Out: &out})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 requests of the operator would be forbidden by its generated roles: grant each with a +kubebuilder:rbac marker")
	assert.Contains(t, out.String(), "missing (the generated roles would forbid them): 1\n  delete pods: 1 requests, 1 forbidden, e.g. ns/p\n")

	out.Reset()
	require.NoError(t, Run(context.Background(), Options{Logs: []string{log}, Operator: hello, Out: &out}))
	assert.Contains(t, out.String(), "delete pods")

	out.Reset()
	require.NoError(t, Run(context.Background(), Options{Logs: []string{logFile(t, allowed)}, Operator: hello, FailOnMissing: true, Out: &out}))
	assert.Contains(t, out.String(), "missing (the generated roles would forbid them): 0\n")
}

// TestLogNeedsName: an audit log alone does not say whose requests to
// audit.
func TestLogNeedsName(t *testing.T) {
	t.Parallel()
	err := Run(context.Background(), Options{Logs: []string{"x.log"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--log needs --name")
}
