package server

import (
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/metrics"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/trigger"
)

// TopicMetrics reads the topic service's delivery counters for /metrics.
func TopicMetrics(topics *topicstore.Service) func() metrics.TopicStats {
	return func() metrics.TopicStats {
		s := topics.Stats()
		return metrics.TopicStats{Delivered: s.Delivered, DeadLettered: s.DeadLettered, Undeliverable: s.Undeliverable,
			Lost: s.Lost, Unsubscribed: s.Unsubscribed, Retries: s.Retries, Recovered: s.Recovered, Duplicates: s.Duplicates}
	}
}

// TriggerAlarmSnapshots are the manager's Stats for the trigger alarms:
// a failed invocation is an error, a timeout, a throttle, an unusable
// batchItemFailures answer or one that lists messages.
func TriggerAlarmSnapshots(m *trigger.Manager) func() []alarms.TriggerSnapshot {
	return func() []alarms.TriggerSnapshot {
		ss := m.Stats()
		out := make([]alarms.TriggerSnapshot, len(ss))
		for i, s := range ss {
			out[i] = alarms.TriggerSnapshot{Name: s.Name, Queue: s.Queue, Errors: s.Errors + s.InvalidResponses, PartialFailures: s.PartialFailures}
		}
		return out
	}
}

// TriggerStats are the manager's Stats for metrics.NewTriggerCollector.
func TriggerStats(m *trigger.Manager) func() []metrics.TriggerStats {
	return func() []metrics.TriggerStats {
		ss := m.Stats()
		out := make([]metrics.TriggerStats, len(ss))
		for i, s := range ss {
			t := metrics.TriggerStats{Name: s.Name, Queue: s.Queue, State: s.State,
				Invocations: s.Invocations, Errors: s.Errors, Timeouts: s.Timeouts, Throttles: s.Throttles,
				InvalidResponses: s.InvalidResponses, PartialFailures: s.PartialFailures, MessagesDeleted: s.MessagesDeleted, MessagesFailed: s.MessagesFailed,
				MessagesFiltered: s.MessagesFiltered, PollErrors: s.PollErrors, Pauses: s.Pauses,
				DurationSeconds: s.DurationSeconds, ConcurrentInvocations: s.ConcurrentInvocations,
				Durations: make(map[string]metrics.Histogram, len(s.Durations))}
			for o, h := range s.Durations {
				t.Durations[o] = metrics.Histogram{Count: h.Count, Sum: h.Sum, Buckets: h.Buckets}
			}
			out[i] = t
		}
		return out
	}
}
