package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemq/tidemq/sns"
)

// RegisterTopics adds the SNS delivery counters, read at scrape time from
// stats: the topic service's own (sns.Service.Stats, safe for concurrent
// use; every delivery ends in exactly one of Delivered, DeadLettered,
// Undeliverable, Lost or Unsubscribed). Call it once, when the topic
// service is open.
func (m *Metrics) RegisterTopics(stats func() sns.DeliveryStats) {
	m.reg.MustRegister(&topicCollector{stats: stats})
}

// topicCollector exposes the SNS delivery counters.
type topicCollector struct{ stats func() sns.DeliveryStats }

var (
	descTopicDeliveries = prometheus.NewDesc("tidemq_sns_deliveries_total",
		"SNS deliveries (one per matching subscription of a publish) that ended, by result: delivered, dead_lettered, undeliverable (no RedrivePolicy), lost (the dead-letter queue refused it) or unsubscribed.",
		[]string{"result"}, nil)
	descTopicRetries = prometheus.NewDesc("tidemq_sns_delivery_retries_total",
		"SNS delivery retry attempts (HTTP/HTTPS endpoints, SQS server-side failures, dead-letter queues).", nil, nil)
	descTopicRecovered = prometheus.NewDesc("tidemq_sns_deliveries_recovered_total",
		"SNS deliveries found in the outbox at start (left by a crash or a shutdown) and delivered again.", nil, nil)
	descTopicDuplicates = prometheus.NewDesc("tidemq_sns_publishes_deduplicated_total",
		"FIFO topic publishes answered from the deduplication window and delivered to no one.", nil, nil)
)

func (c *topicCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descTopicDeliveries
	ch <- descTopicRetries
	ch <- descTopicRecovered
	ch <- descTopicDuplicates
}

func (c *topicCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, r := range []struct {
		result string
		n      uint64
	}{
		{"delivered", s.Delivered}, {"dead_lettered", s.DeadLettered}, {"undeliverable", s.Undeliverable},
		{"lost", s.Lost}, {"unsubscribed", s.Unsubscribed},
	} {
		ch <- prometheus.MustNewConstMetric(descTopicDeliveries, prometheus.CounterValue, float64(r.n), r.result)
	}
	ch <- prometheus.MustNewConstMetric(descTopicRetries, prometheus.CounterValue, float64(s.Retries))
	ch <- prometheus.MustNewConstMetric(descTopicRecovered, prometheus.CounterValue, float64(s.Recovered))
	ch <- prometheus.MustNewConstMetric(descTopicDuplicates, prometheus.CounterValue, float64(s.Duplicates))
}
