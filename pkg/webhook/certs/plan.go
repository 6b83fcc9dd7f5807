package certs

import (
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/cert"

	"github.com/opgen-sdk/opgen/internal/pki"
)

// The Secret of a managed certificate: a kubernetes.io/tls Secret (tls.crt,
// tls.key, and ca.crt as the CA bundle, so that it can also be mounted and
// read by FromDir) with the CA that signs and the CA staged to sign next.
const (
	signerCertKey = "ca-signer.crt"
	signerKeyKey  = "ca-signer.key"
	nextCertKey   = "ca-next.crt"
	nextKeyKey    = "ca-next.key"

	// stagedAtAnnotation is when the next CA joined the bundle;
	// promotedAtAnnotation when it started to sign (the CA before it stays
	// in the bundle for Overlap after that).
	stagedAtAnnotation   = "webhook.opgen.dev/ca-staged-at"
	promotedAtAnnotation = "webhook.opgen.dev/ca-promoted-at"
)

// state is what the Secret holds, parsed.
type state struct {
	signer, next *pki.KeyPair
	serving      *pki.KeyPair
	trusted      []*x509.Certificate // the CA bundle
	stagedAt     time.Time
	promotedAt   time.Time
}

// lifetimes are the parameters of the plan.
type lifetimes struct {
	ca, serving, overlap time.Duration
}

// readState parses a Secret's data. A Secret that cannot be read is an
// error: the plan then starts again from nothing, and says why.
func readState(s *corev1.Secret) (*state, error) {
	st := &state{}
	var err error
	if st.signer, err = pki.Parse(s.Data[signerCertKey], s.Data[signerKeyKey]); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", signerCertKey, signerKeyKey, err)
	}
	if st.next, err = pki.Parse(s.Data[nextCertKey], s.Data[nextKeyKey]); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", nextCertKey, nextKeyKey, err)
	}
	if st.serving, err = pki.Parse(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", corev1.TLSCertKey, corev1.TLSPrivateKeyKey, err)
	}
	if b := s.Data[CAFile]; len(b) > 0 {
		if st.trusted, err = cert.ParseCertsPEM(b); err != nil {
			return nil, fmt.Errorf("%s: %w", CAFile, err)
		}
	}
	for key, at := range map[string]*time.Time{stagedAtAnnotation: &st.stagedAt, promotedAtAnnotation: &st.promotedAt} {
		if v := s.Annotations[key]; v != "" {
			if *at, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return nil, fmt.Errorf("annotation %s: %w", key, err)
			}
		}
	}
	if st.signer == nil || st.serving == nil {
		return nil, fmt.Errorf("no CA or no serving certificate")
	}
	return st, nil
}

// write puts st into s (data and annotations), keeping s's other
// annotations and labels.
func (st *state) write(s *corev1.Secret) {
	s.Type = corev1.SecretTypeTLS
	s.Data = map[string][]byte{
		signerCertKey:           st.signer.CertPEM,
		signerKeyKey:            st.signer.KeyPEM,
		corev1.TLSCertKey:       st.serving.CertPEM,
		corev1.TLSPrivateKeyKey: st.serving.KeyPEM,
		CAFile:                  pki.Bundle(st.trusted),
	}
	if st.next != nil {
		s.Data[nextCertKey], s.Data[nextKeyKey] = st.next.CertPEM, st.next.KeyPEM
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	for key, at := range map[string]time.Time{stagedAtAnnotation: st.stagedAt, promotedAtAnnotation: st.promotedAt} {
		if at.IsZero() {
			delete(s.Annotations, key)
		} else {
			s.Annotations[key] = at.UTC().Format(time.RFC3339Nano)
		}
	}
}

// plan returns the state that should follow st at now, and what changed
// (empty when nothing: the Secret is not written). st nil starts from
// nothing. The steps keep one invariant: the bundle the API server holds
// verifies every serving certificate a replica may still serve.
//
//  1. No CA, or an expired one: a new CA and serving certificate.
//  2. Two thirds into the CA's life, a next CA joins the bundle (staged).
//  3. Overlap after staging (every replica injected the bundle with it),
//     the next CA signs a new serving certificate; the old CA stays in
//     the bundle, for replicas still serving the old certificate.
//  4. Overlap after that (every replica loaded the new certificate), the
//     old CA leaves the bundle.
//  5. Two thirds into the serving certificate's life, or when the names
//     changed, a new serving certificate from the same CA (the bundle
//     needs no change).
func plan(st *state, name string, hosts []string, ips []net.IP, lt lifetimes, now time.Time) (*state, []string, error) {
	if st == nil || !now.Before(st.signer.Cert.NotAfter) {
		ca, err := pki.NewCA(name, now, lt.ca)
		if err != nil {
			return nil, nil, err
		}
		serving, err := pki.NewServing(ca, hosts, ips, now, lt.serving)
		if err != nil {
			return nil, nil, err
		}
		return &state{signer: ca, serving: serving, trusted: []*x509.Certificate{ca.Cert}}, []string{"new CA and serving certificate"}, nil
	}
	next := *st
	next.trusted = slices.Clone(st.trusted)
	var changes []string
	// The bundle: the signer, the staged CA, and the CA before the signer
	// during the overlap; nothing expired.
	keep := func(c *x509.Certificate) bool {
		switch {
		case !now.Before(c.NotAfter):
			return false
		case c.Equal(next.signer.Cert), next.next != nil && c.Equal(next.next.Cert):
			return true
		default:
			return !next.promotedAt.IsZero() && now.Before(next.promotedAt.Add(lt.overlap))
		}
	}
	ensure := func(c *x509.Certificate) {
		if !slices.ContainsFunc(next.trusted, c.Equal) {
			next.trusted = append(next.trusted, c)
		}
	}
	if next.next == nil && !now.Before(pki.RenewAt(next.signer.Cert)) {
		ca, err := pki.NewCA(name, now, lt.ca)
		if err != nil {
			return nil, nil, err
		}
		next.next, next.stagedAt = ca, now
		changes = append(changes, "next CA staged in the bundle")
	}
	if next.next != nil && !now.Before(next.stagedAt.Add(lt.overlap)) {
		ensure(next.signer.Cert) // the old CA stays for the overlap
		next.signer, next.next, next.stagedAt, next.promotedAt = next.next, nil, time.Time{}, now
		next.serving = nil
		changes = append(changes, "next CA promoted to sign")
	}
	ensure(next.signer.Cert)
	if next.next != nil {
		ensure(next.next.Cert)
	}
	if n := len(next.trusted); n > 0 {
		next.trusted = slices.DeleteFunc(next.trusted, func(c *x509.Certificate) bool { return !keep(c) })
		if len(next.trusted) != n {
			changes = append(changes, "old CA left the bundle")
		}
	}
	if !next.promotedAt.IsZero() && !now.Before(next.promotedAt.Add(lt.overlap)) {
		next.promotedAt = time.Time{}
	}
	if next.serving == nil || !pki.SignedBy(next.serving.Cert, next.signer.Cert) || !pki.Names(next.serving.Cert, hosts, ips) ||
		!now.Before(pki.RenewAt(next.serving.Cert)) {
		serving, err := pki.NewServing(next.signer, hosts, ips, now, lt.serving)
		if err != nil {
			return nil, nil, err
		}
		next.serving = serving
		changes = append(changes, "serving certificate renewed")
	}
	if len(changes) == 0 && (len(next.trusted) != len(st.trusted) || !next.promotedAt.Equal(st.promotedAt)) {
		changes = append(changes, "bundle updated")
	}
	return &next, changes, nil
}
