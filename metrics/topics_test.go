package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tidemq/tidemq/sns"
)

func TestTopicCounters(t *testing.T) {
	m := New(Options{NoRuntime: true})
	st := sns.DeliveryStats{Delivered: 7, DeadLettered: 2, Undeliverable: 1, Lost: 0, Unsubscribed: 3, Retries: 5, Recovered: 4, Duplicates: 6}
	m.RegisterTopics(func() sns.DeliveryStats { return st })
	expected := `
# HELP tidemq_sns_deliveries_total SNS deliveries (one per matching subscription of a publish) that ended, by result: delivered, dead_lettered, undeliverable (no RedrivePolicy), lost (the dead-letter queue refused it) or unsubscribed.
# TYPE tidemq_sns_deliveries_total counter
tidemq_sns_deliveries_total{result="dead_lettered"} 2
tidemq_sns_deliveries_total{result="delivered"} 7
tidemq_sns_deliveries_total{result="lost"} 0
tidemq_sns_deliveries_total{result="undeliverable"} 1
tidemq_sns_deliveries_total{result="unsubscribed"} 3
# HELP tidemq_sns_delivery_retries_total SNS delivery retry attempts (HTTP/HTTPS endpoints, SQS server-side failures, dead-letter queues).
# TYPE tidemq_sns_delivery_retries_total counter
tidemq_sns_delivery_retries_total 5
# HELP tidemq_sns_deliveries_recovered_total SNS deliveries found in the outbox at start (left by a crash or a shutdown) and delivered again.
# TYPE tidemq_sns_deliveries_recovered_total counter
tidemq_sns_deliveries_recovered_total 4
# HELP tidemq_sns_publishes_deduplicated_total FIFO topic publishes answered from the deduplication window and delivered to no one.
# TYPE tidemq_sns_publishes_deduplicated_total counter
tidemq_sns_publishes_deduplicated_total 6
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(expected)); err != nil {
		t.Fatal(err)
	}
	st.Delivered = 8 // read at scrape time
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(strings.Replace(expected, `{result="delivered"} 7`, `{result="delivered"} 8`, 1))); err != nil {
		t.Fatal(err)
	}
}
