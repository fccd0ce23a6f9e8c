package topology

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tidemq/tidemq/alarms"
)

// AlarmTarget is what the applier needs from tidemq's built-in alarms;
// *alarms.Evaluator is one.
type AlarmTarget interface {
	// Thresholds are the thresholds applied to a queue now.
	Thresholds(queue string) alarms.Thresholds
	// SetQueueOverride changes the fields of a queue's override that o
	// sets.
	SetQueueOverride(queue string, o alarms.Override)
}

// alarmMapping is what a topology alarm becomes among the built-in alarms.
type alarmMapping struct {
	queue    string
	override alarms.Override
	field    string // the alarms config key it sets: dlq_not_empty, oldest_age_share
	want     string // the value it sets, as printed
	what     string // a description for the plan
}

// mapAlarm turns a queue alarm into a per-queue override of the built-in
// alarms, or says why it has no built-in equivalent:
//
//   - ApproximateNumberOfMessagesVisible above 0 (> 0, or ≥ 1) on a
//     dead-letter queue of the topology is dlq_not_empty, enabled;
//   - ApproximateAgeOfOldestMessage above T seconds is oldest_message_age
//     with the share T / retention of the queue's retention period.
//
// Statistic, period and evaluation periods are not carried over: the
// built-in alarms compare the current value at every evaluation.
func mapAlarm(c *Config, a *Alarm) (*alarmMapping, string) {
	q := c.Queue(queueName(a.Queue))
	if q == nil {
		return nil, fmt.Sprintf("queue %s is not declared in this topology", a.Queue)
	}
	op := a.ComparisonOperator
	if op == "" {
		op = "GreaterThanThreshold"
	}
	above := op == "GreaterThanThreshold" || op == "GreaterThanOrEqualToThreshold"
	switch a.Metric {
	case "ApproximateNumberOfMessagesVisible":
		isDLQ := false
		for _, s := range c.Queues {
			if s.RedrivePolicy != nil && queueName(s.RedrivePolicy.DeadLetterQueue) == q.Name {
				isDLQ = true
			}
		}
		if !isDLQ {
			return nil, fmt.Sprintf("%s is not a dead-letter queue: the built-in alarms have no depth threshold for other queues (consumer_gone and sustained_growth watch them)", q.Name)
		}
		anyMessage := (op == "GreaterThanThreshold" && a.Threshold >= 0 && a.Threshold < 1) ||
			(op == "GreaterThanOrEqualToThreshold" && a.Threshold > 0 && a.Threshold <= 1)
		if !anyMessage {
			return nil, fmt.Sprintf("dlq_not_empty fires on the first visible message; %s %g has no built-in equivalent", op, a.Threshold)
		}
		on := true
		return &alarmMapping{queue: q.Name, override: alarms.Override{DLQNotEmpty: &on}, field: alarms.DLQNotEmpty, want: "true",
			what: fmt.Sprintf("dlq_not_empty on %s", q.Name)}, ""
	case "ApproximateAgeOfOldestMessage":
		if !above {
			return nil, fmt.Sprintf("%s: oldest_message_age fires above a threshold only", op)
		}
		ret := float64(q.Retention())
		if a.Threshold <= 0 || a.Threshold >= ret {
			return nil, fmt.Sprintf("a threshold of %g s is not within the %s retention period of %s", a.Threshold, duration(q.Retention()), q.Name)
		}
		share := a.Threshold / ret
		return &alarmMapping{queue: q.Name, override: alarms.Override{OldestAgeShare: &share}, field: "oldest_age_share", want: formatShare(share),
			what: fmt.Sprintf("oldest_message_age on %s above %g s (%s of the %s retention)", q.Name, a.Threshold, formatShare(share), duration(q.Retention()))}, ""
	}
	return nil, fmt.Sprintf("no built-in alarm watches %s", a.Metric)
}

func formatShare(s float64) string { return strconv.FormatFloat(s, 'g', 4, 64) }

// applyAlarms sets the per-queue overrides that the topology's queue
// alarms map to, and lists the alarms that do not map as skipped. Of two
// age alarms on one queue, the lower threshold is applied.
func applyAlarms(target AlarmTarget, c *Config, dryRun bool, plan *Plan) {
	maps := make([]*alarmMapping, len(c.Alarms))
	why := make([]string, len(c.Alarms))
	lowest := map[string]float64{} // queue → smallest age share
	for i, a := range c.Alarms {
		maps[i], why[i] = mapAlarm(c, a)
		if m := maps[i]; m != nil && m.override.OldestAgeShare != nil {
			if s, ok := lowest[m.queue]; !ok || *m.override.OldestAgeShare < s {
				lowest[m.queue] = *m.override.OldestAgeShare
			}
		}
	}
	for i, a := range c.Alarms {
		m := maps[i]
		if m == nil {
			plan.Changes = append(plan.Changes, Change{Kind: KindAlarm, Name: a.Name, Action: ActionSkip, Reason: why[i]})
			continue
		}
		ch := Change{Kind: KindAlarm, Name: a.Name, Notes: []string{m.what}}
		if s := m.override.OldestAgeShare; s != nil && *s != lowest[m.queue] {
			ch.Action = ActionUnchanged
			ch.Notes = append(ch.Notes, "another alarm on this queue has a lower threshold, which is the one applied")
			plan.Changes = append(plan.Changes, ch)
			continue
		}
		cur := target.Thresholds(m.queue)
		have := ""
		switch {
		case m.override.DLQNotEmpty != nil:
			have = strconv.FormatBool(cur.DLQNotEmpty)
		case m.override.OldestAgeShare != nil:
			have = formatShare(cur.OldestAgeShare)
			if math.Abs(cur.OldestAgeShare-*m.override.OldestAgeShare) < 1e-9 {
				have = m.want
			}
		}
		ch.Action = ActionUnchanged
		if have != m.want {
			ch.Action = ActionUpdate
			ch.Attributes = []AttributeChange{{Name: m.queue + " " + m.field, Old: have, New: m.want}}
			if !dryRun {
				target.SetQueueOverride(m.queue, m.override)
			}
		}
		plan.Changes = append(plan.Changes, ch)
	}
}
