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
	e.gauges.each(func(g *gauges) { // in the table's order: the gauges are read in order
		q := g.owner
		e.advance(q, now, t)
		s := e.snapshotOf(q, now, dlqs)
		s.ARN = q.arn()
		out = append(out, s)
	})
	_ = e.finish(&h, t)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// visitChunk is how many queues Visit advances and copies per hold of the
// engine lock.
const visitChunk = 256

// Visit calls f with every queue's snapshot, in no order, deadlines
// applied as Snapshot does, without a slice of every queue's snapshot (the
// alarms' evaluation: at 100,000 queues that slice was 30 MB, every 30 s).
// The queues are taken in chunks of visitChunk: under the engine lock a
// chunk is advanced and copied into one buffer, reused, and f runs after
// the lock is released, so it may take locks of its own; a queue deleted
// meanwhile is skipped. The snapshots carry no ARN (making it allocates),
// and are valid only during f's call. It returns false, at once or part
// way, when the engine cannot be read (failed, closed, or reloaded since
// the visit began).
func (e *Engine) Visit(f func(*tidemq.QueueSnapshot)) bool {
	h := hold{e: e}
	defer h.guard(nil)
	if h.lock() != nil {
		return false
	}
	qs := make([]*queue, 0, len(e.queues))
	e.gauges.each(func(g *gauges) { qs = append(qs, g.owner) }) // the gauges are then read in order
	dlqs := e.deadLetterTargets()
	epoch := e.epoch
	h.unlock()
	buf := make([]tidemq.QueueSnapshot, 0, min(visitChunk, len(qs)))
	for len(qs) > 0 {
		chunk := qs[:min(visitChunk, len(qs))]
		qs = qs[len(chunk):]
		if h.lock() != nil {
			return false
		}
		if e.epoch != epoch {
			h.unlock()
			return false
		}
		now := e.clock.Now()
		t := e.begin()
		buf = buf[:0]
		for _, q := range chunk {
			if e.queues[q.name] != q {
				continue
			}
			e.advance(q, now, t)
			buf = append(buf, e.snapshotOf(q, now, dlqs))
		}
		if e.finish(&h, t) != nil {
			return false
		}
		for i := range buf {
			f(&buf[i])
		}
	}
	return true
}

// snapshotOf returns q's snapshot, its deadlines applied up to now, but
// for its ARN (the caller's to add: it is made from the name).
func (e *Engine) snapshotOf(q *queue, now time.Time, dlqs map[string]bool) tidemq.QueueSnapshot {
	s := tidemq.QueueSnapshot{
		Name: q.name, FIFO: q.fifo,
		Visible: q.nReady, InFlight: q.nInflight, Delayed: q.nDelayed,
		RetentionSeconds:  int(q.Retention.Seconds()),
		IsDeadLetterQueue: q.deadLetterQueue(dlqs[q.name]),
		Stats:             q.counts(),
		Bytes:             q.bytes, MaxBytes: e.maxQueueBytes,
	}
	s.OldestAgeSeconds = q.oldestAge(now)
	if q.Redrive != nil {
		s.DeadLetterTarget = q.Redrive.DeadLetterTargetARN
		s.MaxReceiveCount = q.Redrive.MaxReceiveCount
	}
	if q.lastReceive != 0 {
		s.LastReceiveUnixMilli = q.lastReceive.Time().UnixMilli()
	}
	return s
}

// oldestAge is the age of q's oldest message in seconds, 0 when empty
// (ApproximateAgeOfOldestMessage).
func (q *queue) oldestAge(now time.Time) float64 {
	if m, ok := q.byAge.Min(); ok && m.state != statePending && (q.cold.n == 0 || m.Enqueued < q.cold.oldest) {
		return now.Sub(m.Enqueued.Time()).Seconds()
	} else if q.cold.n > 0 {
		return now.Sub(q.cold.oldest.Time()).Seconds()
	}
	return 0
}
