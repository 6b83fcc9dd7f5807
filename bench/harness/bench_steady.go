package main

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"
)

// benchSteady runs the owned-ConfigMap handler over objects that are
// already as declared, with every object reconciled again every
// steadyPeriod, and counts the API writes in a window: on the API server
// (apiserver_request_total by group and resource) and in the operator's
// client, Leases apart.
func (s *suite) benchSteady(ctx context.Context) error {
	variants := s.variants(opgen, cr, crAlways)
	for _, v := range s.variants(opgen, cr) { // create the ConfigMaps and settle the status
		p, err := s.startOperator(v, s.steadyOpts(v))
		if err != nil {
			return err
		}
		_, err = p.waitAll(2 * time.Minute)
		if err == nil {
			err = waitWritesSettled(p, 2*time.Second, 2*time.Minute)
		}
		p.stop()
		if err != nil {
			return err
		}
	}
	for r := range s.cfg.rounds {
		for _, v := range order(r, variants...) {
			if err := s.steadyOnce(ctx, v); err != nil {
				return err
			}
		}
	}
	for _, v := range variants {
		logf("   %s: %s object writes/min (apiserver), %s (client), %s lease writes/min, %s reconciles/min", v,
			fmtSeries(s.res.get("steady.objectWritesPerMin", v)), fmtSeries(s.res.get("steady.clientObjectWritesPerMin", v)),
			fmtSeries(s.res.get("steady.leaseWritesPerMin", v)), fmtSeries(s.res.get("steady.reconcilesPerMin", v)))
	}
	return nil
}

func (s *suite) steadyOpts(v string) opts {
	return opts{namespace: namespace(v, "small"), mode: "owned", workers: s.cfg.workers, expect: s.cfg.small,
		requeue: s.cfg.steadyPeriod, leader: true, leaseName: s.leaseName("steady-" + v), lease: s.cfg.stockLease}
}

// waitWritesSettled waits until p made no object write for quiet.
func waitWritesSettled(p *proc, quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last, since := int64(-1), time.Now()
	for time.Now().Before(deadline) {
		st, err := p.stats(false)
		if err != nil {
			return err
		}
		if w := objectWrites(st.Writes); w != last {
			last, since = w, time.Now()
		} else if time.Since(since) >= quiet {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil // a variant that writes on every reconcile never settles
}

func (s *suite) steadyOnce(ctx context.Context, v string) error {
	p, err := s.startOperator(v, s.steadyOpts(v))
	if err != nil {
		return err
	}
	defer p.stop()
	if _, err := p.waitAll(2 * time.Minute); err != nil {
		return err
	}
	// One full period after the start-up reconciles, so that the window
	// sees only periodic ones.
	time.Sleep(s.cfg.steadyPeriod + time.Second)
	srv0, err := s.apiserverWrites(ctx)
	if err != nil {
		return err
	}
	st0, err := p.stats(false)
	if err != nil {
		return err
	}
	t0 := time.Now()
	time.Sleep(s.cfg.steadyWindow)
	srv1, err := s.apiserverWrites(ctx)
	if err != nil {
		return err
	}
	st1, err := p.stats(false)
	if err != nil {
		return err
	}
	perMin := 60 / time.Since(t0).Seconds()
	group := groupOf(v)
	var objects, leases float64
	for k, n := range srv1 {
		d := float64(n - srv0[k])
		switch {
		case k.group == group && (k.resource == "loads"), k.group == "" && k.resource == "configmaps":
			objects += d
		case k.resource == "leases":
			leases += d
		}
	}
	s.res.add("steady.objectWritesPerMin", v, objects*perMin)
	s.res.add("steady.leaseWritesPerMin", v, leases*perMin)
	s.res.add("steady.clientObjectWritesPerMin", v, float64(objectWrites(st1.Writes)-objectWrites(st0.Writes))*perMin)
	s.res.add("steady.clientLeaseWritesPerMin", v, float64(st1.Writes["PUT leases"]-st0.Writes["PUT leases"])*perMin)
	s.res.add("steady.reconcilesPerMin", v, float64(st1.Reconciles-st0.Reconciles)*perMin)
	return nil
}

type requestKey struct{ group, resource string }

// apiserverWrites scrapes apiserver_request_total from the API server's
// /metrics and sums the write verbs by group and resource (subresources
// count with their resource).
func (s *suite) apiserverWrites(ctx context.Context) (map[requestKey]int64, error) {
	data, err := s.env.Clientset().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[requestKey]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		labels := parseLabels(line[len("apiserver_request_total{"):end])
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION", "CREATE", "UPDATE":
		default:
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		out[requestKey{labels["group"], labels["resource"]}] += int64(n)
	}
	return out, sc.Err()
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := s[:eq]
		rest := s[eq+2:]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			break
		}
		out[key] = rest[:end]
		s = strings.TrimPrefix(rest[end+1:], ",")
	}
	return out
}
