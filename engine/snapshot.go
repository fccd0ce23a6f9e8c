package engine

import (
	"sort"
	"time"

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
	dlqs := e.deadLetterTargets()
	out := make([]tidemq.QueueSnapshot, 0, len(e.queues))
	for _, q := range e.queues {
		e.advance(q, now, t)
		out = append(out, e.snapshotOf(q, now, dlqs))
	}
	_ = e.finish(&h, t)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// deadLetterTargets returns the names of this engine's queues that some
// queue's RedrivePolicy names (by name: a queue keeps no ARN).
func (e *Engine) deadLetterTargets() map[string]bool {
	dlqs := make(map[string]bool)
	for _, q := range e.queues {
		if q.Redrive != nil {
			if name, ok := tidemq.QueueNameOfARN(q.Redrive.DeadLetterTargetARN, e.region, e.acct); ok {
				dlqs[name] = true
			}
		}
	}
	return dlqs
}

// snapshotOf returns q's snapshot, its deadlines applied up to now.
func (e *Engine) snapshotOf(q *queue, now time.Time, dlqs map[string]bool) tidemq.QueueSnapshot {
	s := tidemq.QueueSnapshot{
		Name: q.name, ARN: q.arn(), FIFO: q.fifo,
		Visible: q.nReady, InFlight: q.nInflight, Delayed: q.nDelayed,
		RetentionSeconds:  int(q.Retention.Seconds()),
		IsDeadLetterQueue: dlqs[q.name] || q.nDeadLettered > 0 || tidemq.NamedLikeDeadLetterQueue(q.name),
		Stats:             q.counts(),
		Bytes:             q.bytes, MaxBytes: e.maxQueueBytes,
	}
	s.OldestAgeSeconds = q.oldestAge(now)
	if q.Redrive != nil {
		s.DeadLetterTarget = q.Redrive.DeadLetterTargetARN
		s.MaxReceiveCount = q.Redrive.MaxReceiveCount
	}
	if q.lastReceive != 0 {
		s.LastReceiveUnixMilli = q.lastReceive.time().UnixMilli()
	}
	return s
}

// oldestAge is the age of q's oldest message in seconds, 0 when empty
// (ApproximateAgeOfOldestMessage).
func (q *queue) oldestAge(now time.Time) float64 {
	if m, ok := q.byAge.Min(); ok && m.state != statePending && (q.cold.n == 0 || m.enqueued < q.cold.oldest) {
		return now.Sub(m.enqueued.time()).Seconds()
	} else if q.cold.n > 0 {
		return now.Sub(q.cold.oldest.time()).Seconds()
	}
	return 0
}
