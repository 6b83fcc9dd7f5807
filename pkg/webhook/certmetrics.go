package webhook

import (
	"crypto/x509"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

// certificateExpiry is opgen_webhook_certificate_expiration_timestamp_seconds:
// when the certificate the server serves now expires, read at each scrape.
// The API server refuses every write a webhook guards once it has
// expired, so an alert watches it (gen/monitoring). Before the server has
// a certificate the series is absent, not 0: a 0 would read as long
// expired.
type certificateExpiry struct {
	desc *prometheus.Desc
	src  atomic.Pointer[certs.Source]
}

func newCertificateExpiry() *certificateExpiry {
	return &certificateExpiry{desc: prometheus.NewDesc("opgen_webhook_certificate_expiration_timestamp_seconds",
		"When the webhook server's serving certificate expires, in seconds since the Unix epoch.", nil, nil)}
}

// serve makes src the certificate the series reports.
func (c *certificateExpiry) serve(src certs.Source) { c.src.Store(&src) }

func (c *certificateExpiry) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *certificateExpiry) Collect(ch chan<- prometheus.Metric) {
	src := c.src.Load()
	if src == nil {
		return
	}
	pair, err := (*src).GetCertificate(nil)
	if err != nil || pair == nil || len(pair.Certificate) == 0 {
		return
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return
		}
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(leaf.NotAfter.Unix()))
}
