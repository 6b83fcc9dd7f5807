package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/apis"
	schedulev1 "github.com/opgen-sdk/opgen/docs/patterns/apis/batch/v1"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// ScheduleController runs a Schedule's Jobs and keeps the last few.
type ScheduleController struct {
	jobs  *runtime.Reader[*batchv1.Job]
	clock clock.PassiveClock
}

// NewScheduleController reads Jobs from the operator's cache and the time
// from the operator's clock, which a test replaces with a fake one.
func NewScheduleController(op *runtime.Operator) *ScheduleController {
	return &ScheduleController{jobs: NewScheduleReaders(op).Jobs(), clock: op.Options().Clock}
}

// runAnnotation holds, on each Job, the time of the run it is for.
const runAnnotation = "batch.patterns.opgen.dev/run"

// Reconcile creates the Job of a run that is due, deletes the Jobs beyond
// the history limit, and comes back at the next run.
func (c *ScheduleController) Reconcile(ctx context.Context, a *plug.Action[*schedulev1.Schedule]) error {
	s := a.Object
	jobs, err := c.jobs.Owned(s)
	if err != nil {
		return err
	}
	slices.SortFunc(jobs, func(x, y *batchv1.Job) int { return runOf(y) - runOf(x) }) // newest first
	s.Status.Jobs = names(jobs)
	if s.Spec.Suspend {
		return c.trimHistory(ctx, a, jobs) // no run; the change that resumes it wakes it
	}
	now := c.clock.Now()
	next := now // a new Schedule runs at once
	if s.Status.LastRun != nil {
		next = s.Status.LastRun.Add(s.Spec.Every.Duration)
	}
	if !now.Before(next) {
		if err := c.run(ctx, a, next); err != nil {
			return err
		}
		s.Status.LastRun = &metav1.Time{Time: next}
		next = next.Add(s.Spec.Every.Duration)
	}
	if err := c.trimHistory(ctx, a, jobs); err != nil {
		return err
	}
	a.RequeueAfter(next.Sub(now))
	return nil
}

// run creates the Job of the run at t, and says so in a condition only
// once the server took it. Creating it, rather than declaring it (a.Own),
// leaves unused the patch on Jobs that +opgen:controller:owns grants for
// applying declared Jobs (opgen rbac audit lists it): a marker cannot
// tell which way the handler writes its children, so the role keeps it.
func (c *ScheduleController) run(ctx context.Context, a *plug.Action[*schedulev1.Schedule], t time.Time) error {
	s := a.Object
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("%s-%d", s.Name, t.Unix()),
			Labels:      s.Spec.JobTemplate.Labels,
			Annotations: map[string]string{runAnnotation: strconv.FormatInt(t.Unix(), 10)},
		},
		Spec: s.Spec.JobTemplate.Spec,
	}
	created, err := plug.CreateNow(ctx, a, job)
	switch {
	case apierrors.IsAlreadyExists(err):
		a.Log.Info("the run's Job exists already: an earlier try created it", "job", job.Name)
	case err != nil:
		apis.MarkDegraded(s, "JobNotCreated", err.Error())
		return plug.Terminal(fmt.Errorf("create the Job of the run at %s: %w", t.Format(time.RFC3339), err))
	default:
		apis.SetCondition(&s.Status.Conditions, s.Generation, "JobCreated", metav1.ConditionTrue, "Created", created.Name)
	}
	return nil
}

// trimHistory deletes the Jobs of the oldest runs beyond the history
// limit; jobs are the Schedule's, newest first.
func (c *ScheduleController) trimHistory(ctx context.Context, a *plug.Action[*schedulev1.Schedule], jobs []*batchv1.Job) error {
	for _, old := range jobs[min(int(a.Object.Spec.HistoryLimit), len(jobs)):] {
		if err := plug.DeleteNow(ctx, a, old, metav1.DeletePropagationBackground); err != nil {
			return err
		}
	}
	return nil
}

func runOf(j *batchv1.Job) int {
	t, _ := strconv.Atoi(j.Annotations[runAnnotation])
	return t
}

func names(jobs []*batchv1.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Name
	}
	return out
}
