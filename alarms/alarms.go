// Package alarms evaluates tidemq's built-in alarms over queue snapshots:
// a dead-letter queue that is not empty, an oldest message half-way to
// silent expiry, a queue nobody consumes, sustained growth and messages
// that expired; and over trigger snapshots: a trigger whose invocations
// fail. Each
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
	"path"
	"sort"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/trigger"
)

// The alarms, by the id used in labels, the API and the config file.
const (
	DLQNotEmpty  = "dlq_not_empty"
	OldestAge    = "oldest_message_age"
	ConsumerGone = "consumer_gone"
	Growth       = "sustained_growth"
	Expired      = "messages_expired"
	// QueueFull fires while a queue's messages reach the server's
	// --max-queue-bytes: its sends are refused (RequestThrottled).
	QueueFull = "queue_full"
	// TriggerErrors is an alarm on a trigger (Alarm.Trigger), with the
	// thresholds of the trigger's queue.
	TriggerErrors = "trigger_errors"
	// MemoryHigh and DiskLow are alarms on the server (no queue): they
	// fire while its high-water marks refuse every send, resident memory
	// above --max-memory and free disk below --min-free-disk (Mark).
	MemoryHigh = "memory_high"
	DiskLow    = "disk_low"
)

// Names are the alarm ids in display order.
var Names = []string{DLQNotEmpty, OldestAge, ConsumerGone, Growth, Expired, QueueFull, TriggerErrors, MemoryHigh, DiskLow}

// serverAlarms are the alarms of Mark, on the server rather than a queue.
var serverAlarms = map[string]bool{MemoryHigh: true, DiskLow: true}

// queueAlarms are the alarms evaluated on each queue. QueueFull stays
// last: its state is kept apart (queueState.full).
var queueAlarms = [...]string{DLQNotEmpty, OldestAge, ConsumerGone, Growth, Expired, QueueFull}

// alertNames are the Alertmanager alertname of each alarm, the same in the
// webhook and in the generated Prometheus rules.
var alertNames = map[string]string{
	DLQNotEmpty:   "TidemqDeadLetterQueueNotEmpty",
	OldestAge:     "TidemqOldestMessageAge",
	ConsumerGone:  "TidemqConsumerGone",
	Growth:        "TidemqQueueGrowing",
	Expired:       "TidemqMessagesExpired",
	QueueFull:     "TidemqQueueFull",
	TriggerErrors: "TidemqTriggerErrors",
	MemoryHigh:    "TidemqMemoryHigh",
	DiskLow:       "TidemqDiskLow",
}

// AlertName returns the Alertmanager alertname of an alarm id.
func AlertName(alarm string) string { return alertNames[alarm] }

var severities = map[string]string{
	DLQNotEmpty: "critical", OldestAge: "warning", ConsumerGone: "warning", Growth: "warning",
	// An expired message is gone: no dead letter, no replay.
	Expired: "critical", TriggerErrors: "warning",
	// Sends are refused: producers see errors (or back off and wait).
	QueueFull: "critical", MemoryHigh: "critical", DiskLow: "critical",
}

// State is OK or FIRING.
type State string

// The states of an alarm.
const (
	StateOK     State = "OK"
	StateFiring State = "FIRING"
)

// Alarm is one alarm on one queue, or on one trigger (and its queue).
type Alarm struct {
	Alarm string `json:"alarm"`
	Queue string `json:"queue"`
	// Trigger is the trigger of a trigger alarm, "" for a queue alarm.
	Trigger string `json:"trigger,omitempty"`
	State   State  `json:"state"`
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

// triggerFailures is what the trigger alarms count of a trigger's
// counters (trigger.TriggerStats, read as the trigger manager keeps them):
// its failed invocations since the server started. Function errors,
// timeouts, throttles and unusable batchItemFailures answers are failures;
// so are the invocations whose batchItemFailures answer listed messages:
// with BatchSize 1 and ReportBatchItemFailures (seed 000) every failure is
// one, and the listed messages come back and may be dead-lettered just the
// same.
func triggerFailures(t *trigger.TriggerStats) uint64 {
	return t.Errors + t.InvalidResponses + t.PartialFailures
}

// Mark is the state of one of the server's high-water marks, evaluated as
// the alarm of the same id (MemoryHigh, DiskLow) with no queue.
type Mark struct {
	Alarm  string
	Firing bool
	// Value and Threshold are what the mark compares, in bytes.
	Value, Threshold float64
	Summary          string
}

// Options configure an Evaluator.
type Options struct {
	// Snapshots returns every queue's state. Required. A nil result (the
	// broker is closed or failing) skips the evaluation: no data is not
	// the same as no queues.
	Snapshots func() []tidemq.QueueSnapshot
	// Visit, when set, is used instead of Snapshots: it calls f with
	// every queue's snapshot in turn (each valid only during its call;
	// ARN may be left empty) and returns false when it could not, at once
	// or part way: the evaluation then resolves nothing for being unseen
	// (as with a nil Snapshots result) and announces what it changed for
	// the queues it saw. It spares an evaluation the slice of every
	// queue's snapshot: with 100,000 queues, 30 MB at a time, every 30 s.
	Visit func(f func(*tidemq.QueueSnapshot)) bool
	// Triggers returns every trigger's counters (see also SetTriggers);
	// nil when the server runs no triggers (trigger alarms are then not
	// evaluated). A nil result skips the trigger alarms of that
	// evaluation, keeping their states.
	Triggers func() []trigger.TriggerStats
	// Marks returns the state of the server's high-water marks that are
	// on (see also SetMarks); nil: no mark alarms.
	Marks func() []Mark
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
	visit     func(f func(*tidemq.QueueSnapshot)) bool
	triggers  func() []trigger.TriggerStats
	marks     func() []Mark
	clock     tidemq.Clock
	interval  time.Duration
	cfg       Config
	webhook   Webhook
	log       *slog.Logger

	// evalMu is held by Evaluate throughout, mu only while it changes the
	// states (not while it visits the queues: Options.Visit).
	evalMu sync.Mutex
	mu     sync.Mutex
	// alarms are the trigger and mark alarms; a queue's alarms are kept
	// in its queueState (queuealarms.go), without pointers or texts: with
	// 100,000 queues, an Alarm each took 150 MB.
	alarms   map[key]*Alarm
	shown    shownIndex // for Shown
	queues   map[string]*queueState
	triggerS map[triggerKey]*counterWindow
	// round counts the evaluations; loc is the clock's location, in
	// which a queue alarm's Since is given back.
	round uint64
	loc   *time.Location
	// thresholds interns the thresholds that queueStates point to.
	thresholds map[Thresholds]*Thresholds
}

type key struct{ alarm, queue, trigger string }

// triggerKey names a trigger's state: a trigger deleted and created again
// on another queue starts afresh.
type triggerKey struct{ name, queue string }

// queueState is what the evaluator remembers of a queue between rounds:
// one per queue, 176 bytes (it was 304, with each alarm's threshold and
// summary figures kept in it; see alarmState). Its instants are Unix
// nanoseconds (8 bytes, not time.Time's 24).
type queueState struct {
	firstSeen int64
	lastEval  int64
	// The growth run: depth grew at every evaluation since growthStart.
	growthStart int64 // zero: not growing
	// lastDepth, visible and retention are the queue's depth, visible
	// messages and RetentionSeconds at the last evaluation; th the
	// thresholds it applied (interned: Evaluator.thresholds).
	lastDepth int
	visible   int
	retention int32
	// onBits and firingBits: bit i is the queue's i-th alarm (by
	// queueAlarms index) evaluated, and firing.
	onBits, firingBits uint8
	// round is the evaluation that last saw the queue.
	round uint64
	// expired follows Stats.Expired.
	expired counterWindow
	th      *Thresholds
	// alarms are the states of the queue's alarms, by queueAlarms index
	// (slot), but for the last, QueueFull, which only a server with
	// --max-queue-bytes evaluates: full, made on first use.
	alarms [len(queueAlarms) - 1]alarmState
	full   *fullState
}

// slot returns the state of the queue's i-th alarm; nil for a QueueFull
// never evaluated.
func (qs *queueState) slot(i int) *alarmState {
	if i < len(qs.alarms) {
		return &qs.alarms[i]
	}
	if qs.full == nil {
		return nil
	}
	return &qs.full.alarmState
}

// slotFor is slot, making QueueFull's state if need be.
func (qs *queueState) slotFor(i int) *alarmState {
	if i == len(qs.alarms) && qs.full == nil {
		qs.full = &fullState{}
	}
	return qs.slot(i)
}

// counterWindow follows a counter between evaluations and remembers its
// increases for as long as a window needs them.
type counterWindow struct {
	last uint64
	// steps are the increases, oldest first, none older than the window;
	// nil while there are none (most counters never grow).
	steps *[]step
}

type step struct {
	at time.Time
	n  uint64
}

// observe records the counter's value v at now, and returns how much it
// grew in the window up to now. The first value counts as growth from 0
// (the counters start with the server, as the evaluator does); a value
// below the last one is a counter that started again (a queue or trigger
// deleted and made again): it grew by v.
func (c *counterWindow) observe(v uint64, now time.Time, window time.Duration) uint64 {
	d := v - c.last
	if v < c.last {
		d = v
	}
	c.last = v
	var steps []step
	if c.steps != nil {
		steps = *c.steps
	}
	if d > 0 {
		steps = append(steps, step{at: now, n: d})
	}
	i := 0
	for i < len(steps) && now.Sub(steps[i].at) >= window {
		i++
	}
	steps = steps[i:]
	switch {
	case len(steps) == 0:
		c.steps = nil
	case c.steps == nil:
		c.steps = &steps
	default:
		*c.steps = steps
	}
	var sum uint64
	for _, s := range steps {
		sum += s.n
	}
	return sum
}

// DefaultInterval is the evaluation interval without Options.Interval.
const DefaultInterval = 30 * time.Second

// New returns an Evaluator. Call Run to evaluate periodically, or Evaluate.
func New(o Options) *Evaluator {
	e := &Evaluator{
		snapshots: o.Snapshots, visit: o.Visit, triggers: o.Triggers, marks: o.Marks, clock: o.Clock, interval: o.Interval, webhook: o.Webhook, log: o.Logger,
		alarms: make(map[key]*Alarm), queues: make(map[string]*queueState), triggerS: make(map[triggerKey]*counterWindow),
		loc: time.Local, thresholds: make(map[Thresholds]*Thresholds),
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
	out := make([]Alarm, 0, len(e.alarms)+4*len(e.queues))
	for _, a := range e.alarms {
		out = append(out, *a)
	}
	for name, qs := range e.queues {
		for i := range queueAlarms {
			if qs.on(i) {
				out = append(out, e.queueAlarm(name, qs, i))
			}
		}
	}
	e.mu.Unlock()
	Sort(out)
	return out
}

// Shown returns, unsorted, every firing alarm, every alarm of the named
// queues, and one alarm of each name evaluated (so that a caller counting
// the firing alarms by name sees every name). It reads an index the last
// evaluation built and copies only what it returns: a /metrics scrape
// shows the alarms of a few queues out of 5 per queue on a server with
// 100,000 queues (Alarms copies and sorts them all).
func (e *Evaluator) Shown(queues []string) []Alarm {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Alarm, 0, len(e.shown.firing)+len(e.shown.names)+5*len(queues))
	out = append(out, e.shown.firing...)
	for _, a := range e.shown.names {
		if a.State != StateFiring {
			out = append(out, a)
		}
	}
	for _, q := range queues {
		for _, a := range e.shown.byQueue[q] {
			if a.State != StateFiring && a != e.shown.names[a.Alarm] {
				out = append(out, a)
			}
		}
		qs := e.queues[q]
		if qs == nil {
			continue
		}
		for i := range queueAlarms {
			if !qs.on(i) || qs.firing(i) {
				continue
			}
			if n, ok := e.shown.names[queueAlarms[i]]; ok && n.Queue == q && n.Trigger == "" {
				continue
			}
			out = append(out, e.queueAlarm(q, qs, i))
		}
	}
	return out
}

// shownIndex is what Shown reads, rebuilt by each evaluation: copies of
// the alarms it always returns (the states change only in Evaluate).
type shownIndex struct {
	firing []Alarm
	// firingInOrder: firing is sorted (Page sorts it when first asked).
	firingInOrder bool
	names         map[string]Alarm // one alarm of each name
	// byQueue holds the trigger alarms by queue, and the server's own
	// (the marks) under "".
	byQueue map[string][]Alarm
	// order is what Page walks: the names of the queues with alarms, and
	// "", sorted; nil until Page first asks for it (pageOrder).
	order []string
}

// index rebuilds e.shown. Called with e.mu held.
func (e *Evaluator) index() {
	x := shownIndex{names: make(map[string]Alarm), byQueue: make(map[string][]Alarm)}
	for _, a := range e.alarms {
		x.byQueue[a.Queue] = append(x.byQueue[a.Queue], *a)
		if a.State == StateFiring {
			x.firing = append(x.firing, *a)
		}
		if _, ok := x.names[a.Alarm]; !ok {
			x.names[a.Alarm] = *a
		}
	}
	for name, qs := range e.queues {
		for i := range queueAlarms {
			if !qs.on(i) {
				continue
			}
			_, named := x.names[queueAlarms[i]]
			if !qs.firing(i) && named {
				continue
			}
			a := e.queueAlarm(name, qs, i)
			if qs.firing(i) {
				x.firing = append(x.firing, a)
			}
			if !named {
				x.names[a.Alarm] = a
			}
		}
	}
	e.shown = x
}

// Sort orders alarms firing first, then by queue, then in Names order,
// then by trigger.
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
		if a.Alarm != b.Alarm {
			return order[a.Alarm] < order[b.Alarm]
		}
		return a.Trigger < b.Trigger
	})
}

// result is one rule's verdict on one queue.
type result struct {
	firing           bool
	value, threshold float64
	// aux holds what a queue alarm's summary says besides value and
	// threshold (queueSummary); summary is the text of the others.
	aux     [2]float64
	summary string
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
	e.evalMu.Lock()
	defer e.evalMu.Unlock()
	now := e.clock.Now()
	var snaps []tidemq.QueueSnapshot
	if e.visit == nil {
		if snaps = e.snapshots(); snaps == nil {
			return nil
		}
	}
	e.mu.Lock()
	trigFn, markFn := e.triggers, e.marks
	e.mu.Unlock()
	var trigs []trigger.TriggerStats
	if trigFn != nil {
		trigs = trigFn() // outside e.mu, as snapshots
	}
	var marks []Mark
	if markFn != nil {
		marks = markFn()
	}
	var changed []Transition
	e.mu.Lock()
	e.round++
	e.loc = now.Location()
	thresholds := e.thresholdsFor()
	if e.visit != nil {
		// The queues are visited outside e.mu (Visit may hold its broker's
		// lock); each step takes it. evalMu keeps evaluations apart.
		e.mu.Unlock()
		ok := e.visit(func(s *tidemq.QueueSnapshot) {
			e.mu.Lock()
			changed = e.evaluateQueue(s, e.round, thresholds(s.Name), now, changed)
			e.mu.Unlock()
		})
		e.mu.Lock()
		if !ok {
			// Not every queue was seen: nothing is resolved for being
			// unseen, but the transitions made to the queues seen are
			// kept in their state, so they are announced now (the next
			// evaluation, finding them made, makes none).
			e.index()
			e.mu.Unlock()
			for _, t := range changed {
				e.notify(t)
			}
			return changed
		}
	}
	seen := make(map[key]bool)
	for i := range snaps {
		changed = e.evaluateQueue(&snaps[i], e.round, thresholds(snaps[i].Name), now, changed)
	}
	changed = append(changed, e.evaluateTriggers(seen, now, trigFn != nil, trigs)...)
	for _, m := range marks {
		if !serverAlarms[m.Alarm] {
			continue
		}
		k := key{alarm: m.Alarm}
		seen[k] = true
		if t := e.set(k, result{firing: m.Firing, value: m.Value, threshold: m.Threshold, summary: m.Summary}, now); t != nil {
			changed = append(changed, *t)
		}
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
			if a.Trigger != "" {
				a.Summary = "resolved: the trigger is gone or the alarm is off for its queue"
			}
			changed = append(changed, Transition{Alarm: *a, StartsAt: started, EndsAt: now})
		}
		delete(e.alarms, k)
	}
	for name, qs := range e.queues {
		if qs.round == e.round {
			continue
		}
		for i := range queueAlarms {
			if t := e.dropQueueAlarm(name, qs, i, now); t != nil {
				changed = append(changed, *t)
			}
		}
		delete(e.queues, name)
	}
	e.index()
	e.mu.Unlock()
	for _, t := range changed {
		e.notify(t)
	}
	return changed
}

// evaluateQueue runs the queue rules on one queue's snapshot in evaluation
// round, appending the transitions to changed. Called with e.mu held.
func (e *Evaluator) evaluateQueue(s *tidemq.QueueSnapshot, round uint64, th *Thresholds, now time.Time, changed []Transition) []Transition {
	qs := e.queues[s.Name]
	if qs == nil {
		qs = &queueState{firstSeen: now.UnixNano(), lastEval: now.UnixNano(), lastDepth: depth(s)}
		e.queues[s.Name] = qs
	}
	qs.round = round
	qs.th, qs.retention, qs.visible = th, int32(min(s.RetentionSeconds, 1<<31-1)), s.Visible
	for i, name := range queueAlarms {
		r, ok := e.rule(name, s, qs, *th, now)
		if !ok {
			if t := e.dropQueueAlarm(s.Name, qs, i, now); t != nil {
				changed = append(changed, *t)
			}
			continue
		}
		if t := e.setQueueAlarm(s.Name, qs, i, r, now); t != nil {
			changed = append(changed, *t)
		}
	}
	qs.lastDepth, qs.lastEval = depth(s), now.UnixNano()
	return changed
}

// thresholdsFor returns, for this evaluation, the thresholds of each
// queue by name, interned (queueState.th points to them): the config's
// name patterns are listed once, not once a queue. Called with e.mu held;
// so is the function it returns.
func (e *Evaluator) thresholdsFor() func(queue string) *Thresholds {
	cfg := e.cfg
	patterns := cfg.patterns()
	var last *Thresholds
	return func(queue string) *Thresholds {
		t := cfg.Defaults
		if o, ok := cfg.Queues[queue]; ok {
			o.apply(&t)
		} else {
			for _, p := range patterns {
				if ok, _ := path.Match(p, queue); ok {
					o := cfg.Queues[p]
					o.apply(&t)
					break
				}
			}
		}
		if last != nil && *last == t {
			return last
		}
		x, ok := e.thresholds[t]
		if !ok {
			if len(e.thresholds) >= maxThresholdSets {
				return &t
			}
			x = &t
			e.thresholds[t] = x
		}
		last = x
		return x
	}
}

// maxThresholdSets bounds the distinct thresholds the evaluator interns
// (one a queue override, at most); past it, they are not shared.
const maxThresholdSets = 4096

// set records a rule's verdict and returns the transition if its state
// changed.
func (e *Evaluator) set(k key, r result, now time.Time) *Transition {
	state := StateOK
	if r.firing {
		state = StateFiring
	}
	a := e.alarms[k]
	if a == nil {
		a = &Alarm{Alarm: k.alarm, Queue: k.queue, Trigger: k.trigger, State: StateOK, Since: now}
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
func depth(s *tidemq.QueueSnapshot) int { return s.Visible + s.Delayed + s.InFlight }

// rule evaluates one alarm on one queue; ok is false when the alarm does
// not apply to the queue (turned off, or not meaningful for it).
func (e *Evaluator) rule(name string, s *tidemq.QueueSnapshot, qs *queueState, th Thresholds, now time.Time) (result, bool) {
	switch name {
	case DLQNotEmpty:
		if !th.DLQNotEmpty || !s.IsDeadLetterQueue {
			return result{}, false
		}
		return result{firing: s.Visible > 0, value: float64(s.Visible), threshold: 0}, true
	case QueueFull:
		if s.MaxBytes <= 0 {
			return result{}, false
		}
		return result{firing: s.Bytes >= s.MaxBytes, value: float64(s.Bytes), threshold: float64(s.MaxBytes)}, true
	case OldestAge:
		if th.OldestAgeShare <= 0 || s.RetentionSeconds <= 0 {
			return result{}, false
		}
		limit := th.OldestAgeShare * float64(s.RetentionSeconds)
		return result{firing: s.OldestAgeSeconds > limit, value: s.OldestAgeSeconds, threshold: limit,
			aux: [2]float64{th.OldestAgeShare, float64(s.RetentionSeconds)}}, true
	case ConsumerGone:
		if th.NoReceive <= 0 || s.IsDeadLetterQueue {
			return result{}, false
		}
		last := time.Unix(0, qs.firstSeen)
		if s.LastReceiveUnixMilli > 0 {
			if t := time.UnixMilli(s.LastReceiveUnixMilli); t.After(last) {
				last = t
			}
		}
		idle := now.Sub(last)
		return result{firing: s.Visible > 0 && idle >= th.NoReceive, value: idle.Seconds(), threshold: th.NoReceive.Seconds(),
			aux: [2]float64{float64(s.Visible), float64(th.NoReceive)}}, true
	case Growth:
		if th.GrowthWindow <= 0 || s.IsDeadLetterQueue {
			return result{}, false
		}
		d := depth(s)
		switch {
		case d <= qs.lastDepth:
			qs.growthStart = 0
		case qs.growthStart == 0:
			// The previous evaluation is where this run of growth began.
			qs.growthStart = qs.lastEval
		}
		var grown time.Duration
		if qs.growthStart != 0 {
			grown = now.Sub(time.Unix(0, qs.growthStart))
		}
		return result{firing: grown >= th.GrowthWindow, value: grown.Seconds(), threshold: th.GrowthWindow.Seconds(),
			aux: [2]float64{float64(d), float64(th.GrowthWindow)}}, true
	case Expired:
		if th.ExpiredWindow <= 0 {
			qs.expired.observe(s.Stats.Expired, now, 0) // keep following the counter
			return result{}, false
		}
		n := qs.expired.observe(s.Stats.Expired, now, th.ExpiredWindow)
		return result{firing: n > 0, value: float64(n), threshold: 0,
			aux: [2]float64{float64(th.ExpiredWindow), float64(s.RetentionSeconds)}}, true
	}
	return result{}, false
}

// SetMarks sets where the mark alarms read the server's high-water marks
// from, for a server whose marks start after its alarms. The next
// evaluation uses it.
func (e *Evaluator) SetMarks(f func() []Mark) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.marks = f
}

// SetTriggers sets where the trigger alarms read the triggers from, for a
// server whose triggers start after its alarms. The next evaluation uses
// it.
func (e *Evaluator) SetTriggers(f func() []trigger.TriggerStats) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.triggers = f
}

// evaluateTriggers runs the trigger alarms on ts (wired: the evaluator has
// a Triggers function). Called with e.mu held.
func (e *Evaluator) evaluateTriggers(seen map[key]bool, now time.Time, wired bool, ts []trigger.TriggerStats) []Transition {
	if !wired {
		return nil
	}
	if ts == nil {
		// No data: keep the trigger alarms as they are.
		for k := range e.alarms {
			if k.trigger != "" {
				seen[k] = true
			}
		}
		return nil
	}
	var changed []Transition
	present := make(map[triggerKey]bool, len(ts))
	for _, t := range ts {
		tk := triggerKey{t.Name, t.Queue}
		present[tk] = true
		cw := e.triggerS[tk]
		if cw == nil {
			cw = &counterWindow{}
			e.triggerS[tk] = cw
		}
		window := e.cfg.For(t.Queue).TriggerErrorWindow
		n := cw.observe(triggerFailures(&t), now, window)
		if window <= 0 {
			continue
		}
		k := key{alarm: TriggerErrors, queue: t.Queue, trigger: t.Name}
		seen[k] = true
		r := result{firing: n > 0, value: float64(n), threshold: 0,
			summary: fmt.Sprintf("trigger %s had %d failed invocations in the last %s (errors, timeouts, throttles, invalid responses, messages listed in batchItemFailures): their messages come back and may be dead-lettered", t.Name, n, window)}
		if tr := e.set(k, r, now); tr != nil {
			changed = append(changed, *tr)
		}
	}
	for tk := range e.triggerS {
		if !present[tk] {
			delete(e.triggerS, tk)
		}
	}
	return changed
}

func secs(s float64) string { return (time.Duration(s) * time.Second).String() }

// notify logs a transition and sends it to the webhook.
func (e *Evaluator) notify(t Transition) {
	a := t.Alarm
	attrs := []any{"alarm", a.Alarm, "queue", a.Queue, "value", a.Value, "threshold", a.Threshold, "summary", a.Summary}
	if a.Trigger != "" {
		attrs = append(attrs, "trigger", a.Trigger)
	}
	if a.State == StateFiring {
		e.log.Warn("alarm firing", attrs...)
	} else {
		e.log.Info("alarm resolved", attrs...)
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
