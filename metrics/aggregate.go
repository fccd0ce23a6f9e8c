package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemq/tidemq"
)

// The totals over every queue: a scrape's size does not grow with the
// number of queues (as RabbitMQ's and NATS's exporters aggregate by
// default). A counter total drops when a queue is deleted; Prometheus
// reads the drop as a counter reset.
var (
	descQueues = prometheus.NewDesc("tidemq_queues",
		"Queues on the server.", nil, nil)
	descDeadLetterQueues = prometheus.NewDesc("tidemq_dead_letter_queues",
		"Queues that are dead-letter queues (see tidemq_queue_is_dead_letter_queue).", nil, nil)
	descOmitted = prometheus.NewDesc("tidemq_metrics_queues_omitted",
		"Queues without per-queue series in this scrape (--metrics-queue-series): they count in the tidemq_queues_* totals only.", nil, nil)
	descAllVisible = prometheus.NewDesc("tidemq_queues_messages_visible",
		"Messages available for retrieval, over every queue.", nil, nil)
	descAllNotVisible = prometheus.NewDesc("tidemq_queues_messages_not_visible",
		"Messages in flight, over every queue.", nil, nil)
	descAllDelayed = prometheus.NewDesc("tidemq_queues_messages_delayed",
		"Delayed messages, over every queue.", nil, nil)
	descDLQVisible = prometheus.NewDesc("tidemq_dead_letter_queues_messages_visible",
		"Messages available for retrieval in dead-letter queues.", nil, nil)
	descAllOldest = prometheus.NewDesc("tidemq_queues_oldest_message_age_seconds",
		"Age of the oldest message of any queue, 0 when all are empty.", nil, nil)
	descAllSent = prometheus.NewDesc("tidemq_queues_messages_sent_total",
		"Messages accepted by sends, over every queue.", nil, nil)
	descAllDuplicates = prometheus.NewDesc("tidemq_queues_messages_deduplicated_total",
		"FIFO sends answered from the deduplication window, over every queue.", nil, nil)
	descAllReceived = prometheus.NewDesc("tidemq_queues_messages_received_total",
		"Messages returned by ReceiveMessage, over every queue.", nil, nil)
	descAllEmpty = prometheus.NewDesc("tidemq_queues_empty_receives_total",
		"ReceiveMessage calls that returned no message, over every queue.", nil, nil)
	descAllDeleted = prometheus.NewDesc("tidemq_queues_messages_deleted_total",
		"Messages deleted by receipt handle, over every queue.", nil, nil)
	descAllDeadLettered = prometheus.NewDesc("tidemq_queues_messages_dead_lettered_total",
		"Messages moved to a dead-letter queue after maxReceiveCount receives, over every queue.", nil, nil)
	descAllExpired = prometheus.NewDesc("tidemq_queues_messages_expired_total",
		"Messages that reached the end of the retention period, over every queue.", nil, nil)
	descAllPurged = prometheus.NewDesc("tidemq_queues_messages_purged_total",
		"Messages removed by PurgeQueue, over every queue.", nil, nil)
	descAllMovedOut = prometheus.NewDesc("tidemq_queues_messages_moved_out_total",
		"Messages moved out by a message move task or a redrive, over every queue.", nil, nil)
	descAllMovedIn = prometheus.NewDesc("tidemq_queues_messages_moved_in_total",
		"Messages that arrived by a dead-letter move, a move task or a redrive, over every queue.", nil, nil)
	alarmsFiringDesc = prometheus.NewDesc("tidemq_alarms_firing",
		"Alarms firing now, by alarm, over every queue and trigger.", []string{"alarm"}, nil)
)

var aggregateDescs = []*prometheus.Desc{
	descQueues, descDeadLetterQueues, descOmitted, descAllVisible, descAllNotVisible, descAllDelayed,
	descDLQVisible, descAllOldest, descAllSent, descAllDuplicates, descAllReceived, descAllEmpty,
	descAllDeleted, descAllDeadLettered, descAllExpired, descAllPurged, descAllMovedOut, descAllMovedIn,
}

// collectAggregate sends the totals; omitted is the number of queues
// without per-queue series.
func collectAggregate(ch chan<- prometheus.Metric, t *tidemq.QueueTotals, omitted int) {
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	st := &t.Stats
	gauge(descQueues, float64(t.Queues))
	gauge(descDeadLetterQueues, float64(t.DeadLetterQueues))
	gauge(descOmitted, float64(omitted))
	gauge(descAllVisible, float64(t.Visible))
	gauge(descAllNotVisible, float64(t.InFlight))
	gauge(descAllDelayed, float64(t.Delayed))
	gauge(descDLQVisible, float64(t.DeadLetterVisible))
	gauge(descAllOldest, t.OldestAgeSeconds)
	counter(descAllSent, st.Sent)
	counter(descAllDuplicates, st.Duplicates)
	counter(descAllReceived, st.Received)
	counter(descAllEmpty, st.EmptyReceives)
	counter(descAllDeleted, st.Deleted)
	counter(descAllDeadLettered, st.DeadLettered)
	counter(descAllExpired, st.Expired)
	counter(descAllPurged, st.Purged)
	counter(descAllMovedOut, st.MovedOut)
	counter(descAllMovedIn, st.MovedIn)
}

// collectAlarms sends the alarms' states: every firing alarm, and those
// that are OK on the queues in named (all when named is nil), and how many
// of each alarm fire.
func collectAlarms(ch chan<- prometheus.Metric, as []AlarmState, named map[string]bool) {
	firing := map[string]int{}
	for _, a := range as {
		if a.Firing {
			firing[a.Alarm]++
		} else if _, ok := firing[a.Alarm]; !ok {
			firing[a.Alarm] = 0
		}
		if !a.Firing && named != nil && !named[a.Queue] {
			continue
		}
		v := b2f(a.Firing)
		if a.Trigger != "" {
			ch <- prometheus.MustNewConstMetric(triggerAlarmDesc, prometheus.GaugeValue, v, a.Alarm, a.Queue, a.Trigger)
			continue
		}
		ch <- prometheus.MustNewConstMetric(alarmDesc, prometheus.GaugeValue, v, a.Alarm, a.Queue)
	}
	for name, n := range firing {
		ch <- prometheus.MustNewConstMetric(alarmsFiringDesc, prometheus.GaugeValue, float64(n), name)
	}
}
