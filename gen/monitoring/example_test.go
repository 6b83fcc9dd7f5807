package monitoring_test

import (
	"fmt"
	"strings"

	"github.com/opgen-sdk/opgen/gen/monitoring"
)

// The alerts of an operator with webhooks, each on its metrics Service's
// scrape job.
func ExampleRules() {
	data, err := monitoring.Rules(monitoring.Options{Name: "widget-operator", Namespace: "widget-system", Webhooks: true})
	if err != nil {
		panic(err)
	}
	for line := range strings.Lines(string(data)) {
		if alert, ok := strings.CutPrefix(strings.TrimSpace(line), "- alert: "); ok {
			fmt.Println(alert)
		}
	}
	// Output:
	// OpgenHandlerStuck
	// OpgenNoLeader
	// OpgenWatchFailing
	// OpgenActionsFailing
	// OpgenActionTimeouts
	// OpgenFleetClusterNotReady
	// OpgenWebhookCertificateExpiresSoon
}
