package patterns_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	schedulev1 "github.com/opgen-sdk/opgen/docs/patterns/apis/batch/v1"
	"github.com/opgen-sdk/opgen/docs/patterns/internal/controller"
	"github.com/opgen-sdk/opgen/docs/patterns/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// The fake clock runs the operator without leader election, so these
// tests never use the leader-election Role opgen generate writes (opgen
// rbac audit lists it); every deployment of the operator does.
var kit = optest.New(optest.Options{
	Name:      "patterns-operator",
	Setup:     controller.Setup,
	FakeClock: true,
})

func TestMain(m *testing.M) { kit.Main(m) }

// nightly creates a Schedule that runs every hour and keeps three Jobs.
func nightly(t *testing.T, ns string) {
	t.Helper()
	_, err := versioned.NewForConfigOrDie(kit.Config).BatchV1().Schedules(ns).Create(context.Background(), &schedulev1.Schedule{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: schedulev1.ScheduleSpec{
			Every:        metav1.Duration{Duration: time.Hour},
			HistoryLimit: 3,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "backup", Image: "busybox", Command: []string{"true"}}},
			}}}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// runs returns a condition that holds when the Jobs of ns, and the names
// the Schedule's status lists, are those of runs n-2..n, the newest
// three. Run r happens when the clock reads start+(r-1)h; its Job is
// named after that time.
func runs(ns string, start time.Time, n int) func(context.Context) (bool, error) {
	var want []string // newest first
	for r := n; r >= max(1, n-2); r-- {
		want = append(want, fmt.Sprintf("nightly-%d", start.Unix()+int64(r-1)*3600))
	}
	return func(ctx context.Context) (bool, error) {
		list, err := kit.Clientset.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var jobs []string
		for _, j := range list.Items {
			if j.DeletionTimestamp == nil {
				jobs = append(jobs, j.Name)
			}
		}
		slices.Sort(jobs)
		slices.Reverse(jobs)
		s, err := versioned.NewForConfigOrDie(kit.Config).BatchV1().Schedules(ns).Get(ctx, "nightly", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		optest.Saw(ctx, map[string]any{"jobs": jobs, "status": s.Status, "want": want})
		return slices.Equal(jobs, want) && slices.Equal(s.Status.Jobs, want), nil
	}
}

// TestScheduleKeepsTheLastThreeJobs: a Schedule creates a Job at once and
// one more each time the clock passes its period; it keeps the Jobs of
// the last three runs and deletes older ones; between runs it creates
// none. Its status lists the Jobs kept as soon as they are: the handler
// computes it from the list it read before its own CreateNow and
// DeleteNow, and the action the runtime runs after them corrects it.
func TestScheduleKeepsTheLastThreeJobs(t *testing.T) {
	clock := kit.Clock(t)
	ns := kit.Namespace(t)
	nightly(t, ns)
	start := clock.Now()
	optest.Eventually(t, "the first run's Job", runs(ns, start, 1))
	optest.Consistently(t, "no second Job before the clock moves", time.Second, runs(ns, start, 1))
	for run := 2; run <= 5; run++ {
		clock.Step(time.Hour)
		optest.Eventually(t, fmt.Sprintf("the Jobs of runs %d to %d", max(1, run-2), run), runs(ns, start, run))
	}
}

// TestStepWaitsForTheOperator: a test that suspends a Schedule and steps
// the clock at once gets no run: Step first waits until the operator has
// seen the change. Here the operator's watches lag half a second behind
// the API server, so a step that did not wait would always fire the run
// on the old spec.
func TestStepWaitsForTheOperator(t *testing.T) {
	lagWatches(t, 500*time.Millisecond)
	clock := kit.Clock(t)
	ns := kit.Namespace(t)
	nightly(t, ns)
	start := clock.Now()
	optest.Eventually(t, "the first run's Job", runs(ns, start, 1))
	_, err := versioned.NewForConfigOrDie(kit.Config).BatchV1().Schedules(ns).Patch(context.Background(), "nightly",
		types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	clock.Step(time.Hour)
	optest.Consistently(t, "no run while suspended", 2*time.Second, runs(ns, start, 1), optest.Every(200*time.Millisecond))
}

// lagWatches restarts the operator with every watch event delivered d
// late, and restarts it as it was when t ends.
func lagWatches(t *testing.T, d time.Duration) {
	ctx := context.Background()
	require.NoError(t, kit.StopOperator())
	cfg := kit.Operator.Config
	kit.Operator.Config = rest.CopyConfig(cfg)
	kit.Operator.Config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.URL.Query().Get("watch") == "true" {
				resp.Body = lateBody{resp.Body, d}
			}
			return resp, err
		})
	})
	require.NoError(t, kit.StartOperator(ctx))
	t.Cleanup(func() {
		require.NoError(t, kit.StopOperator())
		kit.Operator.Config = cfg
		require.NoError(t, kit.StartOperator(ctx))
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// lateBody hands what it read over d late.
type lateBody struct {
	io.ReadCloser
	d time.Duration
}

func (b lateBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	time.Sleep(b.d)
	return n, err
}
