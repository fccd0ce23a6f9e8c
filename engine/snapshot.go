package engine

import (
	"sort"

	"github.com/tidemq/tidemq"
)

// Snapshot returns every queue's depth, age and counters, sorted by name.
// Due deadlines are applied first, so the numbers are exact at this moment.
// A queue is a dead-letter queue when a RedrivePolicy names it, when it
// holds messages dead-lettered into it, or when it is named like one
// (tidemq.NamedLikeDeadLetterQueue): deleting the source queue does not
// hide a DLQ or its alarm.
func (e *Engine) Snapshot() []tidemq.QueueSnapshot {
	h := hold{e: e}
	defer h.guard(nil)
	if h.lock() != nil {
		return nil
	}
	now := e.clock.Now()
	t := e.begin()
	dlqs := make(map[string]bool)
	for _, q := range e.queues {
		if q.Redrive != nil {
			dlqs[q.Redrive.DeadLetterTargetARN] = true
		}
	}
	out := make([]tidemq.QueueSnapshot, 0, len(e.queues))
	for _, q := range e.queues {
		e.advance(q, now, t)
		s := tidemq.QueueSnapshot{
			Name: q.name, ARN: q.arn, FIFO: q.fifo,
			Visible: q.nReady, InFlight: q.nInflight, Delayed: q.nDelayed,
			RetentionSeconds:  int(q.Retention.Seconds()),
			IsDeadLetterQueue: dlqs[q.arn] || q.nDeadLettered > 0 || tidemq.NamedLikeDeadLetterQueue(q.name),
			Stats:             q.stats,
		}
		if m, ok := q.byAge.Min(); ok && m.state != statePending && (q.cold.n == 0 || m.enqueued < q.cold.oldest) {
			s.OldestAgeSeconds = now.Sub(m.enqueued.time()).Seconds()
		} else if q.cold.n > 0 {
			s.OldestAgeSeconds = now.Sub(q.cold.oldest.time()).Seconds()
		}
		if q.Redrive != nil {
			s.DeadLetterTarget = q.Redrive.DeadLetterTargetARN
			s.MaxReceiveCount = q.Redrive.MaxReceiveCount
		}
		if !q.lastReceive.IsZero() {
			s.LastReceiveUnixMilli = q.lastReceive.UnixMilli()
		}
		out = append(out, s)
	}
	_ = e.finish(&h, t)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
