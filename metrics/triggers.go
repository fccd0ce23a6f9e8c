package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemq/tidemq/trigger"
)

// NewTriggerCollector exposes the triggers' metrics, read at scrape time
// from stats: the trigger manager's own (trigger.Manager.Stats, safe for
// concurrent use), named after Lambda's CloudWatch metrics where Lambda
// has one. tidemq_trigger_state has one series per state of
// trigger.States, 1 for the current one. Labels are the trigger, its
// queue and, for tidemq_trigger_invocation_duration_seconds, the outcome
// (one of trigger.Outcomes): a trigger adds a fixed number of series.
func NewTriggerCollector(stats func() []trigger.TriggerStats) prometheus.Collector {
	return &triggerCollector{stats: stats}
}

type triggerCollector struct {
	stats func() []trigger.TriggerStats
}

var (
	trigLabels      = []string{"trigger", "queue"}
	trigInvocations = prometheus.NewDesc("tidemq_trigger_invocations_total", "Invocations of a trigger's target (Lambda: Invocations).", trigLabels, nil)
	trigErrors      = prometheus.NewDesc("tidemq_trigger_errors_total", "Failed invocations: error, timeout or throttle (Lambda: Errors).", trigLabels, nil)
	trigTimeouts    = prometheus.NewDesc("tidemq_trigger_timeouts_total", "Invocations that ran past the function timeout.", trigLabels, nil)
	trigThrottles   = prometheus.NewDesc("tidemq_trigger_throttles_total", "Invocations the target refused with HTTP 429 (Lambda: Throttles).", trigLabels, nil)
	trigInvalid     = prometheus.NewDesc("tidemq_trigger_invalid_responses_total", "Unusable batchItemFailures responses (the whole batch failed).", trigLabels, nil)
	trigPartial     = prometheus.NewDesc("tidemq_trigger_partial_failures_total", "Invocations whose batchItemFailures answer listed messages (they come back and may be dead-lettered).", trigLabels, nil)
	trigDuration    = prometheus.NewDesc("tidemq_trigger_duration_seconds_total", "Time spent in invocations (Lambda: Duration).", trigLabels, nil)
	trigConcurrent  = prometheus.NewDesc("tidemq_trigger_concurrent_invocations", "Invocations running now (Lambda: ConcurrentExecutions).", trigLabels, nil)
	trigMessages    = prometheus.NewDesc("tidemq_trigger_messages_total", "Messages settled by a trigger, by outcome: deleted, failed or filtered.", append(trigLabels, "outcome"), nil)
	trigPollErrors  = prometheus.NewDesc("tidemq_trigger_poll_errors_total", "Receives of a trigger that failed (the queue is gone, say).", trigLabels, nil)
	trigPauses      = prometheus.NewDesc("tidemq_trigger_pauses_total",
		"Times a trigger paused because its queue's visibility timeout was lowered to or below the function timeout.", trigLabels, nil)
	trigState = prometheus.NewDesc("tidemq_trigger_state",
		"1 for the state the trigger is in (Enabled, Disabled, Paused: its queue's visibility timeout is too short, Failing: it cannot poll), 0 for the others.",
		append(trigLabels, "state"), nil)
	trigHistogram = prometheus.NewDesc("tidemq_trigger_invocation_duration_seconds",
		"Duration of a trigger's invocations, by outcome: success, partial_failure, error, timeout, throttle or invalid_response.",
		append(trigLabels, "outcome"), nil)
)

func (c *triggerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{trigInvocations, trigErrors, trigTimeouts, trigThrottles, trigInvalid, trigPartial, trigDuration,
		trigConcurrent, trigMessages, trigPollErrors, trigPauses, trigState, trigHistogram} {
		ch <- d
	}
}

func (c *triggerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		l := []string{s.Name, s.Queue}
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
		}
		counter(trigInvocations, s.Invocations)
		counter(trigErrors, s.Errors)
		counter(trigTimeouts, s.Timeouts)
		counter(trigThrottles, s.Throttles)
		counter(trigInvalid, s.InvalidResponses)
		counter(trigPartial, s.PartialFailures)
		counter(trigPollErrors, s.PollErrors)
		counter(trigPauses, s.Pauses)
		ch <- prometheus.MustNewConstMetric(trigDuration, prometheus.CounterValue, s.DurationSeconds, l...)
		ch <- prometheus.MustNewConstMetric(trigConcurrent, prometheus.GaugeValue, float64(s.ConcurrentInvocations), l...)
		ch <- prometheus.MustNewConstMetric(trigMessages, prometheus.CounterValue, float64(s.MessagesDeleted), s.Name, s.Queue, "deleted")
		ch <- prometheus.MustNewConstMetric(trigMessages, prometheus.CounterValue, float64(s.MessagesFailed), s.Name, s.Queue, "failed")
		ch <- prometheus.MustNewConstMetric(trigMessages, prometheus.CounterValue, float64(s.MessagesFiltered), s.Name, s.Queue, "filtered")
		for _, st := range trigger.States {
			ch <- prometheus.MustNewConstMetric(trigState, prometheus.GaugeValue, b2f(st == s.State), s.Name, s.Queue, st)
		}
		for outcome, h := range s.Durations {
			ch <- prometheus.MustNewConstHistogram(trigHistogram, h.Count, h.Sum, h.Buckets, s.Name, s.Queue, outcome)
		}
	}
}
