package alarms

import (
	"fmt"
	"time"
)

// alarmState is one queue alarm's state, kept in its queueState: numbers
// only, no pointer and no text. Whether the alarm is on and firing are
// bits of the queueState; its threshold and the figures its summary quotes
// are made, when asked for, from what the queueState keeps of the last
// evaluation (the thresholds, retention, visible messages and depth it
// read): with 100,000 queues, keeping them in every alarm took 30 MB.
// The Alarm a caller sees is made when asked for (queueAlarm), its
// summary written then (queueSummary).
type alarmState struct {
	since int64 // Unix nanoseconds; given back in Evaluator.loc
	value float64
}

// fullState is QueueFull's state, made on first use: only a server with
// --max-queue-bytes evaluates it. Its threshold is that limit.
type fullState struct {
	alarmState
	threshold float64
}

// on reports whether the queue's i-th alarm was evaluated (its rule
// applied to the queue at the last evaluation).
func (qs *queueState) on(i int) bool { return qs.onBits&(1<<i) != 0 }

// firing reports whether the queue's i-th alarm fires.
func (qs *queueState) firing(i int) bool { return qs.firingBits&(1<<i) != 0 }

// setBits sets or clears bit i of *bits.
func setBits(bits *uint8, i int, v bool) {
	if v {
		*bits |= 1 << i
	} else {
		*bits &^= 1 << i
	}
}

// result returns what the rule of the queue's i-th alarm returned at the
// last evaluation, from what qs kept of it.
func (qs *queueState) result(i int) result {
	st := qs.slot(i)
	r := result{firing: qs.firing(i), value: st.value}
	th := qs.th
	if th == nil {
		th = &Thresholds{}
	}
	switch queueAlarms[i] {
	case QueueFull:
		r.threshold = qs.full.threshold
	case OldestAge:
		r.threshold = th.OldestAgeShare * float64(qs.retention)
		r.aux = [2]float64{th.OldestAgeShare, float64(qs.retention)}
	case ConsumerGone:
		r.threshold = th.NoReceive.Seconds()
		r.aux = [2]float64{float64(qs.visible), float64(th.NoReceive)}
	case Growth:
		r.threshold = th.GrowthWindow.Seconds()
		r.aux = [2]float64{float64(qs.lastDepth), float64(th.GrowthWindow)}
	case Expired:
		r.aux = [2]float64{float64(th.ExpiredWindow), float64(qs.retention)}
	}
	return r
}

// queueAlarm returns the Alarm of queue's i-th alarm, as the last
// evaluation left it. Called with e.mu held.
func (e *Evaluator) queueAlarm(queue string, qs *queueState, i int) Alarm {
	return e.alarmOf(queue, i, qs.slot(i).since, qs.result(i))
}

// alarmOf makes the Alarm of queue's i-th alarm from its rule's verdict.
func (e *Evaluator) alarmOf(queue string, i int, since int64, r result) Alarm {
	a := Alarm{Alarm: queueAlarms[i], Queue: queue, State: StateOK, Since: time.Unix(0, since).In(e.loc),
		Value: r.value, Threshold: r.threshold}
	if r.firing {
		a.State = StateFiring
	}
	a.Summary = queueSummary(a.Alarm, queue, r)
	return a
}

// setQueueAlarm records a rule's verdict on queue's i-th alarm and
// returns the transition if its state changed (as set does for the
// others). Called with e.mu held, after qs keeps what this evaluation read
// (evaluateQueue).
func (e *Evaluator) setQueueAlarm(queue string, qs *queueState, i int, r result, now time.Time) *Transition {
	st := qs.slotFor(i)
	if !qs.on(i) {
		*st = alarmState{since: now.UnixNano()}
		setBits(&qs.onBits, i, true)
		setBits(&qs.firingBits, i, false)
	}
	st.value = r.value
	if qs.full != nil && st == &qs.full.alarmState {
		qs.full.threshold = r.threshold
	}
	if qs.firing(i) == r.firing {
		return nil
	}
	t := &Transition{StartsAt: now}
	if !r.firing {
		t.StartsAt, t.EndsAt = time.Unix(0, st.since).In(e.loc), now
	}
	setBits(&qs.firingBits, i, r.firing)
	st.since = now.UnixNano()
	t.Alarm = e.alarmOf(queue, i, st.since, r)
	return t
}

// dropQueueAlarm forgets queue's i-th alarm (the queue is gone or the
// rule is off for it), resolving it if it fires. Called with e.mu held.
func (e *Evaluator) dropQueueAlarm(queue string, qs *queueState, i int, now time.Time) *Transition {
	if !qs.on(i) {
		return nil
	}
	st := qs.slot(i)
	defer func() {
		*st = alarmState{}
		setBits(&qs.onBits, i, false)
		setBits(&qs.firingBits, i, false)
	}()
	if !qs.firing(i) {
		return nil
	}
	started := time.Unix(0, st.since).In(e.loc)
	r := qs.result(i)
	r.firing = false
	a := e.alarmOf(queue, i, now.UnixNano(), r)
	a.Summary = "resolved: the queue is gone or the alarm is off for it"
	return &Transition{Alarm: a, StartsAt: started, EndsAt: now}
}

// queueSummary says in words why a queue alarm is in its state, from what
// its rule returned (see rule for what aux holds).
func queueSummary(alarm, queue string, r result) string {
	switch alarm {
	case DLQNotEmpty:
		return fmt.Sprintf("dead-letter queue %s holds %d visible messages", queue, int64(r.value))
	case QueueFull:
		return fmt.Sprintf("queue %s holds %d bytes of messages, the server's limit is %d (--max-queue-bytes): its sends are refused", queue, int64(r.value), int64(r.threshold))
	case OldestAge:
		return fmt.Sprintf("oldest message is %s old; %.0f%% of the %s retention is %s",
			secs(r.value), r.aux[0]*100, secs(r.aux[1]), secs(r.threshold))
	case ConsumerGone:
		return fmt.Sprintf("%d visible messages and no receive for %s (limit %s)", int64(r.aux[0]), secs(r.value), time.Duration(r.aux[1]))
	case Growth:
		return fmt.Sprintf("depth %d has grown at every evaluation for %s (limit %s)", int64(r.aux[0]), secs(r.value), time.Duration(r.aux[1]))
	case Expired:
		return fmt.Sprintf("%d messages expired in the last %s: they reached the end of the %s retention period unprocessed and were dropped without a dead-letter entry (or moved where the queue's tidemq:capture-expired tag says)",
			uint64(r.value), time.Duration(r.aux[0]), secs(r.aux[1]))
	}
	return ""
}
