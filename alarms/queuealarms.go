package alarms

import (
	"fmt"
	"time"
)

// alarmState is one queue alarm's state, kept in its queueState: numbers
// only, no pointer and no text. The Alarm a caller sees is made from it
// when asked for (queueAlarm), its summary written then (queueSummary).
type alarmState struct {
	on               bool // the rule applied to the queue at the last evaluation
	firing           bool
	since            int64 // Unix nanoseconds; given back in Evaluator.loc
	value, threshold float64
	aux              [2]float64
}

// queueAlarm returns the Alarm of queue's i-th alarm. Called with e.mu
// held.
func (e *Evaluator) queueAlarm(queue string, i int, st *alarmState) Alarm {
	a := Alarm{Alarm: queueAlarms[i], Queue: queue, State: StateOK, Since: time.Unix(0, st.since).In(e.loc),
		Value: st.value, Threshold: st.threshold}
	if st.firing {
		a.State = StateFiring
	}
	a.Summary = queueSummary(a.Alarm, queue, result{value: st.value, threshold: st.threshold, aux: st.aux})
	return a
}

// setQueueAlarm records a rule's verdict on queue's i-th alarm and
// returns the transition if its state changed (as set does for the
// others). Called with e.mu held.
func (e *Evaluator) setQueueAlarm(queue string, i int, st *alarmState, r result, now time.Time) *Transition {
	if !st.on {
		*st = alarmState{on: true, since: now.UnixNano()}
	}
	st.value, st.threshold, st.aux = r.value, r.threshold, r.aux
	if st.firing == r.firing {
		return nil
	}
	t := &Transition{StartsAt: now}
	if !r.firing {
		t.StartsAt, t.EndsAt = time.Unix(0, st.since).In(e.loc), now
	}
	st.firing, st.since = r.firing, now.UnixNano()
	t.Alarm = e.queueAlarm(queue, i, st)
	return t
}

// dropQueueAlarm forgets queue's i-th alarm (the queue is gone or the
// rule is off for it), resolving it if it fires. Called with e.mu held.
func (e *Evaluator) dropQueueAlarm(queue string, i int, st *alarmState, now time.Time) *Transition {
	if st == nil || !st.on {
		return nil
	}
	defer func() { *st = alarmState{} }()
	if !st.firing {
		return nil
	}
	started := time.Unix(0, st.since).In(e.loc)
	st.firing, st.since = false, now.UnixNano()
	a := e.queueAlarm(queue, i, st)
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
