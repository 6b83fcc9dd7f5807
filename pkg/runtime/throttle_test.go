package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// TestThrottlingIsCounted: an operator whose requests API Priority and
// Fairness puts in a priority level of a few seats that rejects what does
// not fit (the server answers 429, client-go retries) shows the 429s in
// opgen_api_throttled_total by verb. Before, only client-go's
// rest_client_* series held them, by HTTP method, and nothing was logged.
func TestThrottlingIsCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	name := "throttled-" + rand.String(5)
	user := "opgen-test-" + name
	admin := env.Clientset()

	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	_, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// One share of the server's seats (a few) that borrows none and
	// rejects what does not fit, for this user alone.
	level := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	_, err = admin.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, level, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.FlowcontrolV1().PriorityLevelConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	schema := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: name},
			MatchingPrecedence:         500,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"},
				}},
			}},
		},
	}
	_, err = admin.FlowcontrolV1().FlowSchemas().Create(ctx, schema, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.FlowcontrolV1().FlowSchemas().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: the server's is the one tested
	h := newOperator(t, ns, cfg, runtime.Options{Name: name})
	lists := h.op.Clientset().CoreV1().ConfigMaps(ns)

	// The API server applies a new FlowSchema within a second or so; until
	// then the requests pass. 32 concurrent lists overflow a few seats; each
	// 429 costs the list a second (the answer's Retry-After).
	deadline := time.Now().Add(60 * time.Second)
	for metric(t, h.op, "opgen_api_throttled_total", "verb", "list") == 0 {
		require.True(t, time.Now().Before(deadline), "waiting 60s for the API server to throttle 32 concurrent lists of one user in a priority level of one share")
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for range 2 {
					_, _ = lists.List(ctx, metav1.ListOptions{})
				}
			})
		}
		wg.Wait()
	}
	throttled := metric(t, h.op, "opgen_api_throttled_total", "verb", "list")
	retried := metric(t, h.op, "rest_client_request_retries_total", "code", "429", "method", "GET")
	t.Logf("429s counted: %v lists; client-go retries after a 429: %v", throttled, retried)
	assert.Positive(t, throttled)
	assert.Zero(t, metric(t, h.op, "opgen_api_throttled_total", "verb", "create"), "only lists were sent")
}
