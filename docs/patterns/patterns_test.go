package patterns_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	schedulev1 "github.com/opgen-sdk/opgen/docs/patterns/apis/batch/v1"
	"github.com/opgen-sdk/opgen/docs/patterns/internal/controller"
	"github.com/opgen-sdk/opgen/docs/patterns/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/optest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// clock is the operator's: the test steps it instead of sleeping.
var clock = clocktesting.NewFakeClock(time.Now())

var kit = optest.New(optest.Options{
	Name:    "patterns-operator",
	Setup:   controller.Setup,
	Runtime: func(o *runtime.Options) { o.Clock = clock },
})

func TestMain(m *testing.M) { kit.Main(m) }

// TestScheduleKeepsTheLastThreeJobs: a Schedule creates a Job at once and
// one more each time the clock passes its period; it keeps the Jobs of
// the last three runs and deletes older ones; between runs it creates
// none.
func TestScheduleKeepsTheLastThreeJobs(t *testing.T) {
	ctx := context.Background()
	ns := kit.Namespace(t)
	schedules := versioned.NewForConfigOrDie(kit.Config).BatchV1().Schedules(ns)
	_, err := schedules.Create(ctx, &schedulev1.Schedule{
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
	// Run n happens when the clock reads start+(n-1)h; its Job is named
	// after that time. runs(n) holds when the Jobs are those of runs
	// n-2..n, the newest three.
	start := clock.Now().Unix()
	runs := func(n int) func(context.Context) (bool, error) {
		var want []string
		for r := max(1, n-2); r <= n; r++ {
			want = append(want, fmt.Sprintf("nightly-%d", start+int64(r-1)*3600))
		}
		return func(ctx context.Context) (bool, error) {
			list, err := kit.Clientset.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			var names []string
			for _, j := range list.Items {
				if j.DeletionTimestamp == nil {
					names = append(names, j.Name)
				}
			}
			slices.Sort(names)
			return slices.Equal(names, want), nil
		}
	}
	optest.Eventually(t, "the first run's Job", runs(1))
	optest.Consistently(t, "no second Job before the clock moves", time.Second, runs(1))
	for run := 2; run <= 5; run++ {
		clock.Step(time.Hour)
		optest.Eventually(t, fmt.Sprintf("the Jobs of runs %d to %d", max(1, run-2), run), runs(run))
	}
}
