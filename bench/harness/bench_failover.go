package main

import (
	"context"
	"fmt"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// pair is two replicas of one variant sharing a Lease.
type pair struct {
	lease           string
	leader, standby *proc
}

const (
	graceful = "graceful"
	crash    = "crash"
)

// benchFailover kills the leader of two replicas, with SIGTERM (graceful)
// and SIGKILL (crash), changes an object right after, and measures the
// leaderless window (from the signal to a new holder in the Lease, seen by
// a watch) and the time from the signal to the new leader's first
// reconcile of the change.
func (s *suite) benchFailover(ctx context.Context) error {
	pairs := map[string]*pair{}
	defer func() {
		for _, p := range pairs {
			for _, pr := range []*proc{p.leader, p.standby} {
				if pr != nil {
					pr.stop()
				}
			}
		}
	}()
	kinds := map[string][]string{graceful: s.variants(opgen, cr, crTuned), crash: s.variants(opgen, cr)}
	for r := range s.cfg.rounds {
		for _, kind := range []string{graceful, crash} {
			for _, v := range order(r, kinds[kind]...) {
				if err := s.failoverOnce(ctx, pairs, v, kind); err != nil {
					return fmt.Errorf("%s %s: %w", kind, v, err)
				}
			}
		}
	}
	for _, kind := range []string{graceful, crash} {
		for _, v := range kinds[kind] {
			logf("   %s %s: leaderless %s s, first reconcile of the change %s s", kind, v,
				fmtSeries(s.res.get("failover."+kind+".leaderless", v)), fmtSeries(s.res.get("failover."+kind+".firstReconcile", v)))
		}
	}
	return nil
}

func (s *suite) failoverOpts(v, lease string) opts {
	return opts{namespace: namespace(v, "small"), mode: "noop", workers: s.cfg.workers, expect: s.cfg.small, trace: true,
		leader: true, leaseName: lease, lease: s.cfg.failover}
}

// ready makes sure v has a leader and a warm standby.
func (s *suite) ready(pairs map[string]*pair, v string) (*pair, error) {
	p := pairs[v]
	if p == nil {
		p = &pair{lease: s.leaseName("failover-" + v)}
		pairs[v] = p
	}
	if p.leader == nil {
		l, err := s.startOperator(v, s.failoverOpts(v, p.lease))
		if err != nil {
			return nil, err
		}
		p.leader = l
		if err := l.waitLead(2*s.cfg.failover.duration + 30*time.Second); err != nil {
			return nil, err
		}
		if _, err := l.waitAll(time.Minute); err != nil {
			return nil, err
		}
	}
	if p.standby == nil {
		sb, err := s.startOperator(v, s.failoverOpts(v, p.lease))
		if err != nil {
			return nil, err
		}
		p.standby = sb
		time.Sleep(3 * time.Second) // its caches sync and it observes the lease
	}
	return p, nil
}

func (s *suite) failoverOnce(ctx context.Context, pairs map[string]*pair, v, kind string) error {
	p, err := s.ready(pairs, v)
	if err != nil {
		return err
	}
	leases := s.env.Clientset().CoordinationV1().Leases(leaseNamespace)
	l, err := leases.Get(ctx, p.lease, metav1.GetOptions{})
	if err != nil {
		return err
	}
	before := holder(l)
	wi, err := leases.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", p.lease).String(),
		ResourceVersion: l.ResourceVersion,
	})
	if err != nil {
		return err
	}
	defer wi.Stop()
	newHolder := make(chan time.Time, 1)
	go func() {
		for ev := range wi.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok {
				if h := holder(l); h != "" && h != before {
					newHolder <- time.Now()
					return
				}
			}
		}
	}()
	sig := syscall.SIGTERM
	if kind == crash {
		sig = syscall.SIGKILL
	}
	name := objectName(0)
	killed := time.Now()
	p.leader.signal(sig)
	gen, err := s.specPatcher(groupOf(v), namespace(v, "small"))(ctx, name, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, 1000+time.Now().UnixNano()%1000000))
	if err != nil {
		return err
	}
	timeout := 2*s.cfg.failover.duration + 20*time.Second
	var tookOver time.Time
	select {
	case tookOver = <-newHolder:
	case <-time.After(timeout):
		return fmt.Errorf("no new holder of the lease %v after the signal", timeout)
	}
	first, err := waitRec(p.standby, name, gen, timeout)
	if err != nil {
		return err
	}
	s.res.add("failover."+kind+".leaderless", v, tookOver.Sub(killed).Seconds())
	s.res.add("failover."+kind+".firstReconcile", v, first.Sub(killed).Seconds())
	select {
	case <-p.leader.done:
	case <-time.After(20 * time.Second):
		p.leader.kill()
	}
	p.leader, p.standby = p.standby, nil
	return nil
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitRec waits for p's first reconcile of name at generation gen or later.
func waitRec(p *proc, name string, gen int64, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, r := range p.traces() {
			if r.name == name && r.gen >= gen {
				return r.t, nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("%s did not reconcile %s at generation %d within %v", p.variant, name, gen, timeout)
}
