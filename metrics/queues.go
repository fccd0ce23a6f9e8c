package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemq/tidemq"
)

// queueCollector turns the broker's snapshots into metrics at scrape
// time: totals over every queue (aggregate.go), and per-queue series for
// at most limit queues (the deepest; all of them when there are no more),
// with the alarms of those queues and every firing alarm. Counters are the
// engine's own counters (since start), so a restart resets them, as
// Prometheus counters expect.
type queueCollector struct {
	summary   func(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot)
	alarms    func() []AlarmState // nil when alarms are off
	alarmsFor func(queues []string) []AlarmState
	limit     int // queues with per-queue series; negative: none
}

// summaryOf makes a summary function (Options.Summary) of a snapshot
// function: every queue's snapshot, totalled, and the limit deepest kept.
func summaryOf(snapshots func() []tidemq.QueueSnapshot) func(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot) {
	return func(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot) {
		snaps := snapshots()
		var tot tidemq.QueueTotals
		for i := range snaps {
			tot.Add(&snaps[i])
		}
		chosen := make([]tidemq.QueueSnapshot, 0)
		for _, i := range selectQueues(snaps, limit) {
			chosen = append(chosen, snaps[i])
		}
		return tot, chosen
	}
}

func queueDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"queue"}, extra...), nil)
}

var (
	descVisible = queueDesc("tidemq_messages_visible",
		"Messages available for retrieval (ApproximateNumberOfMessagesVisible).")
	descNotVisible = queueDesc("tidemq_messages_not_visible",
		"Messages received and not yet deleted or returned: in flight (ApproximateNumberOfMessagesNotVisible).")
	descDelayed = queueDesc("tidemq_messages_delayed",
		"Messages sent with a delay that has not passed yet (ApproximateNumberOfMessagesDelayed).")
	descOldest = queueDesc("tidemq_oldest_message_age_seconds",
		"Age of the oldest message in the queue, 0 when empty (ApproximateAgeOfOldestMessage).")
	descRetention = queueDesc("tidemq_queue_retention_seconds",
		"The queue's MessageRetentionPeriod.")
	descIsDLQ = queueDesc("tidemq_queue_is_dead_letter_queue",
		"1 for a dead-letter queue: a RedrivePolicy names it, it holds dead-lettered messages, or it is named like one (-dlq, _dlq, ...).")
	descBytes = queueDesc("tidemq_messages_bytes",
		"Size of the queue's messages, body and attributes (what --max-queue-bytes limits); 0 where the broker does not keep it.")
	descMaxBytes = queueDesc("tidemq_queue_max_bytes",
		"The server's --max-queue-bytes (only while set): sends to a queue whose tidemq_messages_bytes reaches it are refused.")
	descLastReceive = queueDesc("tidemq_last_receive_timestamp_seconds",
		"When a consumer last asked this queue for messages (Unix time), 0 if never since start.")
	descSent = queueDesc("tidemq_messages_sent_total",
		"Messages accepted by SendMessage and SendMessageBatch, duplicates excluded (NumberOfMessagesSent).")
	descDuplicates = queueDesc("tidemq_messages_deduplicated_total",
		"FIFO sends answered from the deduplication window and not enqueued again.")
	descReceived = queueDesc("tidemq_messages_received_total",
		"Messages returned by ReceiveMessage (NumberOfMessagesReceived).")
	descEmpty = queueDesc("tidemq_empty_receives_total",
		"ReceiveMessage calls that returned no message (NumberOfEmptyReceives).")
	descDeleted = queueDesc("tidemq_messages_deleted_total",
		"Messages deleted by receipt handle (NumberOfMessagesDeleted).")
	descDeadLettered = queueDesc("tidemq_messages_dead_lettered_total",
		"Messages moved out of this (source) queue to its dead-letter queue after maxReceiveCount receives.",
		"dead_letter_queue")
	descExpired = queueDesc("tidemq_messages_expired_total",
		"Messages that reached the end of the retention period.")
	descPurged = queueDesc("tidemq_messages_purged_total",
		"Messages removed by PurgeQueue.")
	descMovedOut = queueDesc("tidemq_messages_moved_out_total",
		"Messages moved out by a message move task or a redrive.")
	descMovedIn = queueDesc("tidemq_messages_moved_in_total",
		"Messages that arrived by a dead-letter move, a message move task or a redrive.")
)

var queueDescs = []*prometheus.Desc{
	descVisible, descNotVisible, descDelayed, descOldest, descRetention, descIsDLQ, descLastReceive, descBytes, descMaxBytes,
	descSent, descDuplicates, descReceived, descEmpty, descDeleted, descDeadLettered, descExpired,
	descPurged, descMovedOut, descMovedIn,
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range queueDescs {
		ch <- d
	}
	for _, d := range aggregateDescs {
		ch <- d
	}
	if c.alarms != nil {
		ch <- alarmDesc
		ch <- triggerAlarmDesc
		ch <- alarmsFiringDesc
	}
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	tot, chosen := c.summary(c.limit)
	collectAggregate(ch, &tot, tot.Queues-len(chosen))
	for i := range chosen {
		collectQueue(ch, &chosen[i])
	}
	if c.alarms == nil {
		return
	}
	if len(chosen) == tot.Queues || c.alarmsFor == nil {
		var named map[string]bool // the queues with per-queue series; nil: all
		if len(chosen) < tot.Queues {
			named = queueNames(chosen)
		}
		collectAlarms(ch, c.alarms(), named)
		return
	}
	names := make([]string, len(chosen))
	for i := range chosen {
		names[i] = chosen[i].Name
	}
	collectAlarms(ch, c.alarmsFor(names), queueNames(chosen))
}

func queueNames(snaps []tidemq.QueueSnapshot) map[string]bool {
	named := make(map[string]bool, len(snaps))
	for i := range snaps {
		named[snaps[i].Name] = true
	}
	return named
}

// collectQueue sends one queue's series.
func collectQueue(ch chan<- prometheus.Metric, s *tidemq.QueueSnapshot) {
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, s.Name)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), s.Name)
	}
	gauge(descVisible, float64(s.Visible))
	gauge(descNotVisible, float64(s.InFlight))
	gauge(descDelayed, float64(s.Delayed))
	gauge(descOldest, s.OldestAgeSeconds)
	gauge(descRetention, float64(s.RetentionSeconds))
	gauge(descIsDLQ, b2f(s.IsDeadLetterQueue))
	gauge(descLastReceive, float64(s.LastReceiveUnixMilli)/1000)
	gauge(descBytes, float64(s.Bytes))
	if s.MaxBytes > 0 {
		gauge(descMaxBytes, float64(s.MaxBytes))
	}
	counter(descSent, s.Stats.Sent)
	counter(descDuplicates, s.Stats.Duplicates)
	counter(descReceived, s.Stats.Received)
	counter(descEmpty, s.Stats.EmptyReceives)
	counter(descDeleted, s.Stats.Deleted)
	counter(descExpired, s.Stats.Expired)
	counter(descPurged, s.Stats.Purged)
	counter(descMovedOut, s.Stats.MovedOut)
	counter(descMovedIn, s.Stats.MovedIn)
	// The dead-lettered counter carries the current dead-letter queue;
	// a queue without a RedrivePolicy that once had one keeps its
	// count under dead_letter_queue="".
	if s.DeadLetterTarget != "" || s.Stats.DeadLettered > 0 {
		ch <- prometheus.MustNewConstMetric(descDeadLettered, prometheus.CounterValue,
			float64(s.Stats.DeadLettered), s.Name, queueNameOf(s.DeadLetterTarget))
	}
}

// selectQueues returns the indexes, in snaps' order (by name), of the
// queues that get per-queue series: all of them when there are at most
// limit, else the limit deepest (visible + in flight + delayed; ties by
// name), so that what piles up stays visible. A negative limit selects
// none.
func selectQueues(snaps []tidemq.QueueSnapshot, limit int) []int {
	if limit < 0 {
		return nil
	}
	idx := make([]int, len(snaps))
	for i := range idx {
		idx[i] = i
	}
	if len(snaps) <= limit {
		return idx
	}
	sort.SliceStable(idx, func(a, b int) bool { return tidemq.DeeperFirst(&snaps[idx[a]], &snaps[idx[b]]) })
	idx = idx[:limit]
	sort.Ints(idx)
	return idx
}

// queueNameOf returns the queue name in an SQS ARN (its last part).
func queueNameOf(arn string) string {
	if a, ok := tidemq.ParseARN(arn); ok {
		return a.Resource
	}
	return arn
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
