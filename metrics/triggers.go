package metrics

import "github.com/prometheus/client_golang/prometheus"

// TriggerStats are one trigger's state and counters since the server
// started (trigger.Manager.Stats), named after Lambda's CloudWatch metrics
// where Lambda has one.
type TriggerStats struct {
	Name, Queue string
	// State is one of the states given to NewTriggerCollector.
	State string
	// Invocations counts calls of the target; Errors those that failed
	// (an error, a timeout or a throttle), Timeouts and Throttles some of
	// those; InvalidResponses the unusable batchItemFailures answers.
	Invocations, Errors, Timeouts, Throttles, InvalidResponses uint64
	// PartialFailures counts invocations whose batchItemFailures answer
	// listed messages (Lambda has no such metric).
	PartialFailures uint64
	// Messages settled: deleted after processing, left to come back
	// (failed), deleted unseen by a filter.
	MessagesDeleted, MessagesFailed, MessagesFiltered uint64
	// PollErrors counts failed receives; Pauses the times the trigger
	// paused for a visibility timeout lowered under it.
	PollErrors, Pauses    uint64
	DurationSeconds       float64
	ConcurrentInvocations int64
	// Durations are the invocation durations by outcome (a bounded set:
	// success, partial_failure, error, timeout, throttle,
	// invalid_response), for the outcomes that happened.
	Durations map[string]Histogram
}

// Histogram is a distribution: Count observations summing to Sum, and
// Buckets mapping each upper bound to the cumulative count at or below it.
type Histogram struct {
	Count   uint64
	Sum     float64
	Buckets map[float64]uint64
}

// NewTriggerCollector exposes the triggers' metrics, read from stats at
// scrape time (it must be safe for concurrent use). states are every state
// a trigger can be in: tidemq_trigger_state has one series per state, 1
// for the current one. Labels are the trigger, its queue and, for
// tidemq_trigger_invocation_duration_seconds, the outcome: a trigger adds
// a fixed number of series.
func NewTriggerCollector(states []string, stats func() []TriggerStats) prometheus.Collector {
	return &triggerCollector{states: states, stats: stats}
}

type triggerCollector struct {
	states []string
	stats  func() []TriggerStats
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
		for _, st := range c.states {
			ch <- prometheus.MustNewConstMetric(trigState, prometheus.GaugeValue, b2f(st == s.State), s.Name, s.Queue, st)
		}
		for outcome, h := range s.Durations {
			ch <- prometheus.MustNewConstHistogram(trigHistogram, h.Count, h.Sum, h.Buckets, s.Name, s.Queue, outcome)
		}
	}
}
