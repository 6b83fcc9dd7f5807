package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hellov1 "github.com/opgen-sdk/opgen/examples/hello-operator/apis/hello/v1"
	"github.com/opgen-sdk/opgen/pkg/optest"
	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
)

// TestTheRolesAllowEveryRequest takes a Greeting through its life, then
// reads the API server's audit log: the roles the manifest binds to the
// operator allowed every request it made so far, in every test of the
// package. A refusal no other test notices fails here, such as that of an
// Event, which the runtime drops after its retries.
func TestTheRolesAllowEveryRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	createGreeting(t, ns, "audited", "Hello, audit")
	greeting := func(ctx context.Context) (*hellov1.Greeting, error) {
		return hello.HelloV1().Greetings(ns).Get(ctx, "audited", metav1.GetOptions{})
	}
	owner := optest.WaitFor(t, "the Greeting's status at its generation", greeting, func(g *hellov1.Greeting) bool {
		return g.Status.ObservedGeneration == g.Generation
	})
	optest.WaitForOwned(t, owner, func(ctx context.Context) (*appsv1.Deployment, error) {
		return kit.Clientset.AppsV1().Deployments(ns).Get(ctx, "audited", metav1.GetOptions{})
	})
	optest.Eventually(t, "the operator's Event about the Greeting in the audit log", func(context.Context) (bool, error) {
		rep, err := kit.Audit()
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(rep.All, func(r rbacaudit.Request) bool {
			return r.Verb == "create" && r.Group == "events.k8s.io" && r.Namespace == ns
		}), nil
	})
	require.NoError(t, hello.HelloV1().Greetings(ns).Delete(ctx, "audited", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Greeting", greeting)

	rep, err := kit.Audit()
	require.NoError(t, err)
	var report strings.Builder
	_, _ = rep.WriteTo(&report)
	t.Log(report.String())
	assert.Empty(t, rep.Missing, "the generated roles forbid requests of the operator:\n%s", report.String())
}
