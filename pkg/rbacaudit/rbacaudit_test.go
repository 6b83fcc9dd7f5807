package rbacaudit_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
)

// hello is hello-operator's committed config, whose role.yaml carries the
// comments opgen generate writes.
var hello = rbacaudit.Options{Name: "hello-operator", ConfigDir: "../../examples/hello-operator/config"}

// event is one audit event of user, as kube-apiserver logs it.
func event(id, user, verb, group, resource, sub, ns, name string, code int32) auditv1.Event {
	ev := auditv1.Event{
		AuditID: types.UID(id), Stage: auditv1.StageResponseComplete, Verb: verb,
		User:           authnv1.UserInfo{Username: user},
		ResponseStatus: nil,
	}
	if resource == "" {
		ev.RequestURI = name + "?timeout=32s"
	} else {
		ev.ObjectRef = &auditv1.ObjectReference{APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	if code != 0 {
		ev.ResponseStatus = &metav1.Status{Code: code}
	}
	return ev
}

func log(t *testing.T, events ...auditv1.Event) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range events {
		data, err := json.Marshal(ev)
		require.NoError(t, err)
		b.Write(append(data, '\n'))
	}
	return &b
}

// TestCompare: what the role allows is not missing, whatever the
// response; what it does not allow is, once per verb and resource; the
// API server's grants to every user (discovery) are not missing; the
// grants no request used are listed with the comments of role.yaml.
func TestCompare(t *testing.T) {
	t.Parallel()
	user := hello.User()
	require.Equal(t, "system:serviceaccount:hello-operator-system:hello-operator", user)
	l := log(t,
		event("1", user, "list", "hello.example.com", "greetings", "", "", "", 200),
		event("2", user, "watch", "hello.example.com", "greetings", "", "", "", 200),
		event("2", user, "watch", "hello.example.com", "greetings", "", "", "", 200), // the same request, at its second stage
		event("3", user, "patch", "hello.example.com", "greetings", "status", "ns", "world", 200),
		event("4", user, "delete", "", "pods", "", "ns", "p1", 403),
		event("5", user, "delete", "", "pods", "", "ns", "p2", 403),
		event("6", user, "get", "", "", "", "", "/apis", 200),
		event("7", "someone-else", "delete", "", "secrets", "", "ns", "s", 403),
		event("8", user, "get", "coordination.k8s.io", "leases", "", "hello-operator-system", "hello-operator", 200),
		event("9", user, "get", "coordination.k8s.io", "leases", "", "elsewhere", "hello-operator", 403),
		event("10", user, "patch", "apps", "deployments", "", "ns", "world", 201),
	)
	requests, err := rbacaudit.ReadLog(l, user)
	require.NoError(t, err)
	roles, err := rbacaudit.ReadRoles(hello)
	require.NoError(t, err)
	rep := rbacaudit.Compare(roles, requests)
	assert.Equal(t, 10, rep.Requests, "the apply that created a Deployment counts as a create too")
	require.Len(t, rep.Missing, 2, "%+v", rep.Missing)
	assert.Equal(t, rbacaudit.Request{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "elsewhere", Name: "hello-operator", Count: 1, Forbidden: 1}, rep.Missing[0], "the Lease Role holds in the operator's namespace only")
	assert.Equal(t, rbacaudit.Request{Verb: "delete", Resource: "pods", Namespace: "ns", Name: "p1", Count: 2, Forbidden: 2}, rep.Missing[1])
	assert.True(t, rep.Failed())

	var out strings.Builder
	_, err = rep.WriteTo(&out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "  delete pods: 2 requests, 2 forbidden, e.g. ns/p1\n")
	assert.Contains(t, out.String(), "    delete on deployments.apps: +opgen:controller:owns=apps/v1.Deployment on Greeting: pruning an owned object the handler no longer declares (apis/hello/v1/greeting_types.go:19)\n")
	assert.NotContains(t, out.String(), "create on deployments.apps", "the apply that created a Deployment used create")
	assert.NotContains(t, out.String(), "get, list, patch, watch on greetings.hello.example.com:", "list and watch were used")
	for _, g := range rep.Unused {
		assert.True(t, g.Audited, "%+v: only config/rbac's grants are audited", g)
		assert.NotEmpty(t, g.Why, "%+v: every grant of config/rbac says why", g)
	}
}

// TestWhyLine: what opgen generate writes, ReadRoles reads back.
func TestWhyLine(t *testing.T) {
	t.Parallel()
	line := rbacaudit.WhyLine([]string{"get", "list"}, []string{"pods", "pods/log"}, "+kubebuilder:rbac:groups=\"\",resources=pods,verbs=get;list (x.go:3)")
	assert.Equal(t, `# get, list on pods, pods/log: +kubebuilder:rbac:groups="",resources=pods,verbs=get;list (x.go:3)`, line)
}

// TestReadLogRefusesWhatIsNoAuditLog: a line that is no event says which
// line and what log is wanted.
func TestReadLogRefusesWhatIsNoAuditLog(t *testing.T) {
	t.Parallel()
	_, err := rbacaudit.ReadLog(strings.NewReader("{}\nnot json\n"), "u")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2 of the audit log is no audit event")
	assert.Contains(t, err.Error(), "--audit-log-format=json")
}
