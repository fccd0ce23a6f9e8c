package server

import (
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/trigger"
)

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
