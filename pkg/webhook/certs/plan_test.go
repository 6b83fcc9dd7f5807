package certs

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

var testHosts = []string{"op-webhook", "op-webhook.ns", "op-webhook.ns.svc", "op-webhook.ns.svc.cluster.local"}

// verifies reports whether serving chains to a CA of bundle at now, as
// the API server checks it.
func verifies(serving *x509.Certificate, bundle []*x509.Certificate, now time.Time) error {
	pool := x509.NewCertPool()
	for _, c := range bundle {
		pool.AddCert(c)
	}
	_, err := serving.Verify(x509.VerifyOptions{Roots: pool, DNSName: "op-webhook.ns.svc", CurrentTime: now})
	return err
}

// TestPlanKeepsTrust runs the plan through three CA lifetimes, one sync a
// step, and checks at every step the invariant rotation depends on: every
// serving certificate a replica may still serve (those of the last two
// syncs: a replica lags a sync at most) verifies against the bundle the
// API server may still hold (the last two syncs' bundles, before and after
// the injection).
func TestPlanKeepsTrust(t *testing.T) {
	t.Parallel()
	lt := lifetimes{ca: 60 * time.Minute, serving: 10 * time.Minute, overlap: 2 * time.Minute}
	step := time.Minute / 2 // Resync: the overlap is four syncs
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var (
		st       *state
		history  []*state
		counts   = map[string]int{}
		promoted int
	)
	for i := 0; now.Before(time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)); i++ {
		next, changes, err := plan(st, "op-webhook-cert", testHosts, nil, lt, now)
		require.NoError(t, err)
		for _, c := range changes {
			counts[c]++
			if c == "next CA promoted to sign" {
				promoted++
			}
		}
		if len(changes) == 0 {
			assert.Same(t, st.serving, next.serving, "no change keeps the certificate")
		}
		// Round trip through a Secret, as between replicas.
		var s corev1.Secret
		next.write(&s)
		st, err = readState(&s)
		require.NoError(t, err)
		history = append(history, st)
		recent := history[max(0, len(history)-2):]
		for _, served := range recent {
			for _, bundle := range recent {
				require.NoError(t, verifies(served.serving.Cert, bundle.trusted, now),
					"at %s (step %d, changes %v): a serving certificate still served is not trusted by a bundle the API server may hold", now, i, changes)
			}
		}
		assert.LessOrEqual(t, len(st.trusted), 2, "the bundle holds at most two CAs")
		now = now.Add(step)
	}
	t.Logf("3 hours in %s steps: %v", step, counts)
	assert.GreaterOrEqual(t, promoted, 3, "the CA was replaced every two thirds of its hour")
	assert.GreaterOrEqual(t, counts["serving certificate renewed"], 20)
	assert.Equal(t, counts["old CA left the bundle"], promoted)
}

// TestPlanStartsAgain: an expired CA, or a Secret that cannot be read, is
// replaced by a new CA; a change of names renews the serving certificate
// from the same CA.
func TestPlanStartsAgain(t *testing.T) {
	t.Parallel()
	lt := lifetimes{ca: time.Hour, serving: 10 * time.Minute, overlap: time.Minute}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, changes, err := plan(nil, "x", testHosts, nil, lt, now)
	require.NoError(t, err)
	assert.Equal(t, []string{"new CA and serving certificate"}, changes)

	again, changes, err := plan(st, "x", testHosts, nil, lt, now.Add(2*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"new CA and serving certificate"}, changes, "an expired CA is replaced")
	assert.False(t, again.signer.Cert.Equal(st.signer.Cert))

	renamed, changes, err := plan(st, "x", testHosts, []net.IP{net.IPv4(127, 0, 0, 1)}, lt, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, []string{"serving certificate renewed"}, changes)
	assert.True(t, renamed.signer.Cert.Equal(st.signer.Cert), "the same CA")
	assert.True(t, renamed.serving.Cert.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)))

	_, err = readState(&corev1.Secret{Data: map[string][]byte{signerCertKey: []byte("not PEM"), signerKeyKey: []byte("x")}})
	require.ErrorContains(t, err, signerCertKey)
	_, err = readState(&corev1.Secret{})
	require.ErrorContains(t, err, "no CA")
}
