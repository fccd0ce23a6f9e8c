// Package alarms evaluates tidemq's built-in alarms over queue snapshots:
// a dead-letter queue that is not empty, an oldest message half-way to
// silent expiry, a queue nobody consumes, and sustained growth. Each
// transition between OK and FIRING is logged, sent to a webhook in
// Alertmanager's format, and visible through Alarms (for /tidemq/alarms,
// `tidemq alarms` and the tidemq_alarm_firing metric).
//
// Time is injected: evaluations read the Clock and Run waits on its timers,
// so tests advance a fake clock and never sleep.
package alarms

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
)

// The alarms, by the id used in labels, the API and the config file.
const (
	DLQNotEmpty  = "dlq_not_empty"
	OldestAge    = "oldest_message_age"
	ConsumerGone = "consumer_gone"
	Growth       = "sustained_growth"
)

// Names are the alarm ids in display order.
var Names = []string{DLQNotEmpty, OldestAge, ConsumerGone, Growth}

// alertNames are the Alertmanager alertname of each alarm, the same in the
// webhook and in the generated Prometheus rules.
var alertNames = map[string]string{
	DLQNotEmpty:  "TidemqDeadLetterQueueNotEmpty",
	OldestAge:    "TidemqOldestMessageAge",
	ConsumerGone: "TidemqConsumerGone",
	Growth:       "TidemqQueueGrowing",
}

// AlertName returns the Alertmanager alertname of an alarm id.
func AlertName(alarm string) string { return alertNames[alarm] }

var severities = map[string]string{
	DLQNotEmpty: "critical", OldestAge: "warning", ConsumerGone: "warning", Growth: "warning",
}

// State is OK or FIRING.
type State string

// The states of an alarm.
const (
	StateOK     State = "OK"
	StateFiring State = "FIRING"
)

// Alarm is one alarm on one queue.
type Alarm struct {
	Alarm string `json:"alarm"`
	Queue string `json:"queue"`
	State State  `json:"state"`
	// Since is when the alarm entered its state (for OK: when it was
	// first evaluated or last resolved).
	Since time.Time `json:"since"`
	// Value and Threshold are what the rule compared, in the rule's unit
	// (messages, seconds).
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	// Summary says in words why the alarm is in its state.
	Summary string `json:"summary"`
}

// Options configure an Evaluator.
type Options struct {
	// Snapshots returns every queue's state. Required. A nil result (the
	// broker is closed or failing) skips the evaluation: no data is not
	// the same as no queues.
	Snapshots func() []tidemq.QueueSnapshot
	// Clock is read at each evaluation. Default: the system clock.
	Clock tidemq.Clock
	// Interval between evaluations in Run. Default 30 s.
	Interval time.Duration
	// Config holds the thresholds; the zero value means DefaultConfig().
	Config *Config
	// Webhook, if set, receives every transition (Alertmanager webhook
	// format, version 4).
	Webhook Webhook
	Logger  *slog.Logger
}

// Evaluator evaluates the alarms and keeps their states.
type Evaluator struct {
	snapshots func() []tidemq.QueueSnapshot
	clock     tidemq.Clock
	interval  time.Duration
	cfg       Config
	webhook   Webhook
	log       *slog.Logger

	mu     sync.Mutex
	alarms map[key]*Alarm
	queues map[string]*queueState
}

type key struct{ alarm, queue string }

// queueState is what the evaluator remembers of a queue between rounds.
type queueState struct {
	firstSeen time.Time
	lastEval  time.Time
	// The growth run: depth grew at every evaluation since growthStart.
	lastDepth   int
	growthStart time.Time // zero: not growing
}

// DefaultInterval is the evaluation interval without Options.Interval.
const DefaultInterval = 30 * time.Second

// New returns an Evaluator. Call Run to evaluate periodically, or Evaluate.
func New(o Options) *Evaluator {
	e := &Evaluator{
		snapshots: o.Snapshots, clock: o.Clock, interval: o.Interval, webhook: o.Webhook, log: o.Logger,
		alarms: make(map[key]*Alarm), queues: make(map[string]*queueState),
	}
	if e.clock == nil {
		e.clock = tidemq.SystemClock{}
	}
	if e.interval <= 0 {
		e.interval = DefaultInterval
	}
	if o.Config != nil {
		e.cfg = *o.Config
	} else {
		e.cfg = DefaultConfig()
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	return e
}

// Run evaluates at once and then every interval until ctx ends.
func (e *Evaluator) Run(ctx context.Context) {
	for {
		e.Evaluate()
		t := e.clock.NewTimer(e.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// Alarms returns every evaluated alarm, firing first, then by queue and
// alarm.
func (e *Evaluator) Alarms() []Alarm {
	e.mu.Lock()
	out := make([]Alarm, 0, len(e.alarms))
	for _, a := range e.alarms {
		out = append(out, *a)
	}
	e.mu.Unlock()
	Sort(out)
	return out
}

// Sort orders alarms firing first, then by queue, then in Names order.
func Sort(as []Alarm) {
	order := make(map[string]int, len(Names))
	for i, n := range Names {
		order[n] = i
	}
	sort.Slice(as, func(i, j int) bool {
		a, b := as[i], as[j]
		if (a.State == StateFiring) != (b.State == StateFiring) {
			return a.State == StateFiring
		}
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		return order[a.Alarm] < order[b.Alarm]
	})
}

// result is one rule's verdict on one queue.
type result struct {
	firing           bool
	value, threshold float64
	summary          string
}

// Transition is an alarm that changed state. StartsAt is when it began to
// fire; EndsAt, for a resolved alarm, when it stopped.
type Transition struct {
	Alarm
	StartsAt time.Time
	EndsAt   time.Time
}

// Evaluate runs every rule on every queue once, at the clock's time, and
// reports the transitions it made.
func (e *Evaluator) Evaluate() []Transition {
	now := e.clock.Now()
	snaps := e.snapshots()
	if snaps == nil {
		return nil
	}
	e.mu.Lock()
	seen := make(map[key]bool)
	var changed []Transition
	present := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		present[s.Name] = true
		qs := e.queues[s.Name]
		if qs == nil {
			qs = &queueState{firstSeen: now, lastEval: now, lastDepth: depth(s)}
			e.queues[s.Name] = qs
		}
		th := e.cfg.For(s.Name)
		for _, name := range Names {
			r, ok := e.rule(name, s, qs, th, now)
			if !ok {
				continue
			}
			k := key{name, s.Name}
			seen[k] = true
			if t := e.set(k, r, now); t != nil {
				changed = append(changed, *t)
			}
		}
		qs.lastDepth, qs.lastEval = depth(s), now
	}
	// Alarms of deleted queues (or rules turned off) resolve and go.
	for k, a := range e.alarms {
		if seen[k] {
			continue
		}
		if a.State == StateFiring {
			started := a.Since
			a.State, a.Since = StateOK, now
			a.Summary = "resolved: the queue is gone or the alarm is off for it"
			changed = append(changed, Transition{Alarm: *a, StartsAt: started, EndsAt: now})
		}
		delete(e.alarms, k)
	}
	for name := range e.queues {
		if !present[name] {
			delete(e.queues, name)
		}
	}
	e.mu.Unlock()
	for _, t := range changed {
		e.notify(t)
	}
	return changed
}

// set records a rule's verdict and returns the transition if its state
// changed.
func (e *Evaluator) set(k key, r result, now time.Time) *Transition {
	state := StateOK
	if r.firing {
		state = StateFiring
	}
	a := e.alarms[k]
	if a == nil {
		a = &Alarm{Alarm: k.alarm, Queue: k.queue, State: StateOK, Since: now}
		e.alarms[k] = a
	}
	a.Value, a.Threshold, a.Summary = r.value, r.threshold, r.summary
	if a.State == state {
		return nil
	}
	t := &Transition{StartsAt: now}
	if state == StateOK {
		t.StartsAt, t.EndsAt = a.Since, now
	}
	a.State, a.Since = state, now
	t.Alarm = *a
	return t
}

// depth is a queue's depth as the seeds define it: visible + delayed + in
// flight.
func depth(s tidemq.QueueSnapshot) int { return s.Visible + s.Delayed + s.InFlight }

// rule evaluates one alarm on one queue; ok is false when the alarm does
// not apply to the queue (turned off, or not meaningful for it).
func (e *Evaluator) rule(name string, s tidemq.QueueSnapshot, qs *queueState, th Thresholds, now time.Time) (result, bool) {
	switch name {
	case DLQNotEmpty:
		if !th.DLQNotEmpty || !s.IsDeadLetterQueue {
			return result{}, false
		}
		return result{
			firing: s.Visible > 0, value: float64(s.Visible), threshold: 0,
			summary: fmt.Sprintf("dead-letter queue %s holds %d visible messages", s.Name, s.Visible),
		}, true
	case OldestAge:
		if th.OldestAgeShare <= 0 || s.RetentionSeconds <= 0 {
			return result{}, false
		}
		limit := th.OldestAgeShare * float64(s.RetentionSeconds)
		return result{
			firing: s.OldestAgeSeconds > limit, value: s.OldestAgeSeconds, threshold: limit,
			summary: fmt.Sprintf("oldest message is %s old; %.0f%% of the %s retention is %s",
				secs(s.OldestAgeSeconds), th.OldestAgeShare*100, secs(float64(s.RetentionSeconds)), secs(limit)),
		}, true
	case ConsumerGone:
		if th.NoReceive <= 0 || s.IsDeadLetterQueue {
			return result{}, false
		}
		last := qs.firstSeen
		if s.LastReceiveUnixMilli > 0 {
			if t := time.UnixMilli(s.LastReceiveUnixMilli); t.After(last) {
				last = t
			}
		}
		idle := now.Sub(last)
		return result{
			firing: s.Visible > 0 && idle >= th.NoReceive, value: idle.Seconds(), threshold: th.NoReceive.Seconds(),
			summary: fmt.Sprintf("%d visible messages and no receive for %s (limit %s)", s.Visible, secs(idle.Seconds()), th.NoReceive),
		}, true
	case Growth:
		if th.GrowthWindow <= 0 || s.IsDeadLetterQueue {
			return result{}, false
		}
		d := depth(s)
		switch {
		case d <= qs.lastDepth:
			qs.growthStart = time.Time{}
		case qs.growthStart.IsZero():
			// The previous evaluation is where this run of growth began.
			qs.growthStart = qs.lastEval
		}
		var grown time.Duration
		if !qs.growthStart.IsZero() {
			grown = now.Sub(qs.growthStart)
		}
		return result{
			firing: grown >= th.GrowthWindow, value: grown.Seconds(), threshold: th.GrowthWindow.Seconds(),
			summary: fmt.Sprintf("depth %d has grown at every evaluation for %s (limit %s)", d, secs(grown.Seconds()), th.GrowthWindow),
		}, true
	}
	return result{}, false
}

func secs(s float64) string { return (time.Duration(s) * time.Second).String() }

// notify logs a transition and sends it to the webhook.
func (e *Evaluator) notify(t Transition) {
	a := t.Alarm
	if a.State == StateFiring {
		e.log.Warn("alarm firing", "alarm", a.Alarm, "queue", a.Queue, "value", a.Value, "threshold", a.Threshold, "summary", a.Summary)
	} else {
		e.log.Info("alarm resolved", "alarm", a.Alarm, "queue", a.Queue, "value", a.Value, "threshold", a.Threshold, "summary", a.Summary)
	}
	if e.webhook != nil {
		e.webhook.Send(t)
	}
}

// Thresholds returns the thresholds the evaluator applies to the named
// queue now.
func (e *Evaluator) Thresholds(queue string) Thresholds {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg.For(queue)
}

// SetQueueOverride changes the thresholds of one queue (an exact name) at
// run time: the fields that o sets replace those of the override that
// applies to the queue now; the others keep their values. The next
// evaluation uses them. ('tidemq serve --config' uses it to turn a
// topology's queue alarms into overrides.)
func (e *Evaluator) SetQueueOverride(queue string, o Override) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg = e.cfg.WithOverride(queue, o)
}
