package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// Options configure an Engine.
type Options struct {
	// Store keeps the durable state. Required.
	Store storage.Store
	// Clock is read for every deadline. Default: the system clock.
	Clock tidemq.Clock
	// Region and AccountID make up queue ARNs. Defaults: us-east-1 and
	// 000000000000.
	Region    string
	AccountID string
	// SweepInterval is how often (in real time) every queue is advanced so
	// that expired messages are dropped and counted even when nobody looks.
	// Default 1 s; negative turns the sweep off (tests that drive a fake
	// clock rely on the lazy advance instead).
	SweepInterval time.Duration
	// PageSize pages the backlog of standard queues (page.go): a queue
	// keeps about this many ready messages in memory, and the rest in the
	// store, read back a page at a time as receives drain the queue. A
	// FIFO queue is paged per message group, in pages of PageSize/16
	// (fifopage.go).
	// 0 keeps every message in memory (for a store that is in memory
	// anyway); `tidemq serve` uses DefaultPageSize on its disk store.
	PageSize int
	// CheckpointInterval is how often, on the Clock, the sweep writes a
	// checkpoint of the paged backlog while it changes (checkpoint.go), so
	// that a start-up after a crash reads what changed since, not the
	// backlog. Default DefaultCheckpointInterval; negative: only at
	// start-up and Close.
	CheckpointInterval time.Duration
	// MaxQueueBytes, when positive, refuses sends to a queue whose
	// messages (body and attributes, as SQS counts a message's size) add
	// up to at least this many bytes, with RequestThrottled, which SDKs
	// retry with backoff (`tidemq serve --max-queue-bytes`). Receives,
	// deletes and dead-letter moves go on, so consumers drain the queue.
	MaxQueueBytes int64
	// Inflight caps each queue's messages in flight; its zero value is
	// AWS's 120,000 (tidemq.InflightLimits).
	Inflight tidemq.InflightLimits
	Logger   *slog.Logger
}

// Engine is the single-node Broker. It is safe for concurrent use.
type Engine struct {
	// QueueCore implements the calls on a queue's record over the
	// engine's queueDriver (queuedriver.go).
	tidemq.QueueCore

	store  storage.Store
	clock  tidemq.Clock
	region string
	acct   string
	log    *slog.Logger
	// pageSize is Options.PageSize (0: not paged).
	pageSize int
	// maxQueueBytes is Options.MaxQueueBytes (0: no limit).
	maxQueueBytes int64
	// inflight is Options.Inflight.
	inflight tidemq.InflightLimits
	// checkpointEvery is Options.CheckpointInterval (0: off).
	checkpointEvery time.Duration

	// mu guards everything below and every queue and message. Never held
	// while waiting for an fsync (see the package comment). Taken only
	// through a hold (lock.go).
	mu     sync.Mutex
	queues map[string]*queue // by name
	byID   map[uint64]*queue
	byName byName // e.queues in name order (queueorder.go)
	// gauges are the counts of e.queues, side by side (gauges.go).
	gauges gaugeTable
	// ahead accounts for the queues' read-aheads (readahead.go).
	ahead aheadState
	// busy are the queues the sweep visits: every queue that is not idle
	// (queue.markBusy), and some that became idle since the last sweep.
	busy        map[*queue]struct{}
	nextQueueID uint64
	handleKey   []byte // seals receipt handles; see receipt.go
	// ck is the checkpoint bookkeeping (checkpoint.go).
	ck checkpointState
	// loadedRecords counts the message records the last load read (what a
	// checkpoint saves; tests read it).
	loadedRecords int
	// lastCommit is the most recent committed batch: an operation that
	// writes nothing still waits for it, since what it read may not be
	// durable yet (a delete of a message whose delete is still syncing).
	lastCommit *sharedDurable
	// Message move tasks, by id and by source ARN in start order.
	tasks         map[string]*moveTask
	tasksBySource map[string][]*moveTask
	// onTaskEnd, if set (by tests), is called when a task's runner exits.
	onTaskEnd func(id, status string)
	// epoch counts the reloads of the state (recover.go); broken is closed
	// when the engine fails, and replaced when it recovers.
	epoch  uint64
	broken chan struct{}
	// onRecovery, if set (by tests), is called after each recovery attempt.
	onRecovery func(err error)

	// failure is set while the engine is failed, and closed once Close
	// began: both are written under mu and read without it (recover.go).
	failure atomic.Pointer[failure]
	closed  atomic.Bool

	closing  chan struct{}  // closed by Close: the sweep stops
	draining tidemq.Drainer // by Drain (and Close): long polls return at once
	wg       sync.WaitGroup
}

var _ tidemq.Broker = (*Engine)(nil)

// Open loads the state in o.Store and starts the engine.
func Open(o Options) (*Engine, error) {
	if o.Store == nil {
		return nil, errors.New("engine: Options.Store is required")
	}
	e := &Engine{
		store:           o.Store,
		clock:           o.Clock,
		region:          o.Region,
		acct:            o.AccountID,
		log:             o.Logger,
		pageSize:        max(o.PageSize, 0),
		maxQueueBytes:   max(o.MaxQueueBytes, 0),
		inflight:        o.Inflight,
		checkpointEvery: max(o.CheckpointInterval, 0),
		broken:          make(chan struct{}),
		closing:         make(chan struct{}),
		ahead:           aheadState{max: aheadBytes, totalMax: aheadTotalBytes},
	}
	if o.CheckpointInterval == 0 {
		e.checkpointEvery = DefaultCheckpointInterval
	}
	e.QueueCore = tidemq.NewQueueCore(queueDriver{e})
	e.resetState()
	e.clock, e.region, e.acct, e.log = tidemq.BrokerDefaults(e.clock, e.region, e.acct, e.log)
	start := time.Now()
	if err := e.load(); err != nil {
		return nil, fmt.Errorf("engine: load state: %w", err)
	}
	e.log.Info("engine state loaded", "queues", len(e.queues), "messages", e.countMessages(), "took", time.Since(start).Round(time.Millisecond))
	e.resumeTasks()
	interval := o.SweepInterval
	if interval == 0 {
		interval = time.Second
	}
	if interval > 0 {
		e.wg.Add(1)
		go e.sweepLoop(interval)
	}
	return e, nil
}

// resetState empties the in-memory state, for load to fill.
func (e *Engine) resetState() {
	e.queues = make(map[string]*queue)
	e.byID = make(map[uint64]*queue)
	e.byName = newByName()
	e.gauges = gaugeTable{}
	e.ahead.bytes, e.ahead.queues = 0, make(map[*queue]struct{})
	e.busy = make(map[*queue]struct{})
	e.nextQueueID = 0
	e.handleKey = nil
	e.ck = checkpointState{gen: e.ck.gen}
	e.lastCommit = nil
	e.tasks = make(map[string]*moveTask)
	e.tasksBySource = make(map[string][]*moveTask)
}

// resumeTasks starts a runner for every loaded task that was running.
func (e *Engine) resumeTasks() {
	for _, t := range e.tasks {
		if t.Active() {
			e.log.Info("resuming message move task", "source", t.SourceARN, "moved", t.ApproximateNumberOfMessagesMoved)
			e.startTask(t)
		}
	}
}

// Drain answers every waiting long poll (empty) and makes later receives
// return without waiting. A server calls it when it begins to shut down, so
// that open long polls do not hold the shutdown up for 20 seconds.
func (e *Engine) Drain() {
	e.draining.Drain()
}

// Close answers every waiting long poll, stops the sweep and closes the
// store. The engine must not be used afterwards.
func (e *Engine) Close() error {
	e.Drain()
	e.mu.Lock()
	if e.closed.Load() {
		e.mu.Unlock()
		return nil
	}
	e.closed.Store(true)
	close(e.closing)
	e.mu.Unlock()
	e.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pageSize > 0 && e.failure.Load() == nil && storage.BrokenErr(e.store) == nil {
		// The last engine write: a checkpoint for the next start-up.
		b := e.store.NewBatch()
		e.writeCheckpoint(b, true)
		if d, err := b.Commit(); err != nil {
			e.log.Warn("checkpoint not written: the next start-up reads what changed since the last one", "err", err)
		} else if err := d.Wait(); err != nil {
			e.log.Warn("checkpoint not written: the next start-up reads what changed since the last one", "err", err)
		}
	}
	return e.store.Close()
}

// countMessages counts the messages of every queue. Called with e.mu held
// (or by Open, before the engine is shared).
func (e *Engine) countMessages() int {
	n := 0
	for _, q := range e.queues {
		n += len(q.msgs) + q.cold.n
	}
	return n
}

// Healthy reports nil while the engine can serve, or why it cannot. It
// does not wait for the engine lock.
func (e *Engine) Healthy() error {
	if f := e.failure.Load(); f != nil {
		return fmt.Errorf("engine failed, recovering: %w", f.err)
	}
	if e.closed.Load() {
		return errors.New("engine closed")
	}
	return nil
}

// arn returns the ARN of the named queue.
//
// A queue of another region than the engine's own is named "<region>/<name>"
// (tidemq.RegionalQueueName); its ARN carries that region and the plain name.
func (e *Engine) arn(name string) string { return tidemq.RegionalQueueARN(e.region, e.acct, name) }

// canonical writes the engine's own region out of a queue name
// ("us-east-1/orders" is "orders" in us-east-1), so that a queue has one name.
func (e *Engine) canonical(name string) string { return tidemq.CanonicalQueueName(name, e.region) }

// queueByARN finds a queue of this broker by ARN.
func (e *Engine) queueByARN(arn string) *queue {
	name, ok := tidemq.QueueNameOfARN(arn, e.region, e.acct)
	if !ok {
		return nil
	}
	return e.queues[name]
}

// lockQueue takes e.mu through h, finds the named queue and applies its
// due deadlines. On success e.mu is held and the caller ends with
// e.finish(h, t); on error e.mu is released.
func (e *Engine) lockQueue(h *hold, name string) (*queue, time.Time, *txn, error) {
	if err := h.lock(); err != nil {
		return nil, time.Time{}, nil, err
	}
	q, err := e.queue(name)
	if err != nil {
		h.unlock()
		return nil, time.Time{}, nil, err
	}
	now := e.clock.Now()
	t := e.begin()
	e.advance(q, now, t)
	return q, now, t, nil
}

// queue looks up a queue under the lock.
func (e *Engine) queue(name string) (*queue, error) {
	q := e.queues[name]
	if q == nil && strings.Contains(name, "/") {
		q = e.queues[e.canonical(name)]
	}
	if q == nil {
		return nil, tidemq.NonExistentQueue()
	}
	return q, nil
}

// sweepLoop advances every queue periodically, so that retention expiry
// happens (and is counted and logged) even on queues nobody reads.
func (e *Engine) sweepLoop(interval time.Duration) {
	defer e.wg.Done()
	tidemq.Every(interval, e.closing, func() { e.Sweep() })
}

// Sweep advances every queue to now: due delays and visibility timeouts
// are applied and expired messages dropped (or captured). Expiry is never
// silent: each queue whose messages expired since the last sweep gets one
// log line with the count, and the counts are returned.
//
// It visits only the busy queues (e.busy): advancing an idle queue does
// nothing, and with 100,000 empty queues the walk over all of them every
// second was the idle server's work. A queue found idle leaves the set.
//
// It first checks that the store can still commit: the topic service and
// the triggers share it, and a write of theirs that broke it must start
// the engine's recovery (which reopens the store for every user) even
// while the engine itself writes nothing.
func (e *Engine) Sweep() map[string]int {
	h := hold{e: e}
	defer h.guard(nil)
	if h.lock() != nil {
		return nil
	}
	if err := storage.BrokenErr(e.store); err != nil {
		e.failLocked(err)
		return nil
	}
	t := e.begin()
	now := e.clock.Now()
	expired := make(map[string]int)
	captured := make(map[string]string)
	for q := range e.busy {
		if e.queues[q.name] != q { // deleted
			delete(e.busy, q)
			q.busy = false
			continue
		}
		name := q.name
		e.advance(q, now, t)
		if q.expiredUnlogged > 0 {
			expired[name] = q.expiredUnlogged
			q.expiredUnlogged = 0
			if c := e.captureTarget(q); c != nil {
				captured[name] = c.name
			}
		}
		if len(q.msgs) == 0 {
			// Every timer left names a message that is gone (a timer is
			// only set for a message in memory): no need to wait for its
			// deadline to pop it.
			q.timers = nil
		}
		if q.idle() {
			delete(e.busy, q)
			q.busy = false
		}
	}
	e.dropIdleAhead(now)
	if e.checkpointDue(now) {
		e.writeCheckpoint(t.b, false)
	}
	_ = e.finish(&h, t)
	for name, n := range expired {
		if c, ok := captured[name]; ok {
			e.log.Info("messages expired", "queue", name, "count", n, "reason", "retention period passed", "captured_into", c)
		} else {
			e.log.Warn("messages expired", "queue", name, "count", n, "reason", "retention period passed", "captured_into", "none: dropped")
		}
	}
	return expired
}
