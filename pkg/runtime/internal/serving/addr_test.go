package serving

import "testing"

// TestAddrOrOff: the "serving" log line spells addresses a user can paste.
func TestAddrOrOff(t *testing.T) {
	for addr, want := range map[string]string{
		"":                "off",
		"[::]:40123":      "http://localhost:40123/metrics",
		"0.0.0.0:40123":   "http://localhost:40123/metrics",
		":40123":          "http://localhost:40123/metrics",
		"127.0.0.1:40123": "http://127.0.0.1:40123/metrics",
	} {
		if got := AddrOrOff(addr, "/metrics"); got != want {
			t.Errorf("AddrOrOff(%q) = %q, want %q", addr, got, want)
		}
	}
}
