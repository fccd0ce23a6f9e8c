package engine

import (
	"fmt"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// Failure and recovery.
//
// The engine fails when a commit or an fsync fails (its memory is then
// ahead of its store: a full disk) or when an operation panics while it
// holds e.mu (its memory may be half-changed; see lock.go). A failed engine
// refuses all work with InternalFailure, Healthy reports why, and it
// recovers by itself: a loop waits 1 s, then 2 s, 4 s, ... up to 30 s
// between attempts (on the Clock), and each attempt reopens the store
// (storage.Reopener, which clears an error the store keeps) and rebuilds
// the whole in-memory state from it with the load that Open uses. The
// first attempt that succeeds, and whose store takes a synced write,
// clears the failure.
//
// Invariants:
//   - Nothing acknowledged is lost: no answer is given before its batch is
//     durable (txn.go), and the reload reads the store, not memory. It may
//     also find writes whose operation answered an error (their outcome was
//     unknown, as after a crash).
//   - Nothing from before a reload acts on the state after it. The reload
//     bumps e.epoch, and finish neither fails the engine nor publishes for
//     an operation that began in an older epoch; a move task runner whose
//     task is no longer in e.tasks stops (the reload resumes the task with
//     a runner of its own, as Open does); every other call takes the lock
//     through hold.lock, which refuses while the engine is failed, and then
//     reads the current state.
//   - No long poll waits on a queue that a reload replaced: e.broken is
//     closed when the engine fails, waking every long poll, and a long poll
//     that wakes to a failed engine answers empty.
//   - e.failure is written under e.mu and read without it, so Healthy
//     never waits for the lock.
//
// The reload holds e.mu while it reopens and reads the store, and waits
// for fsyncs under it: nothing else can work meanwhile anyway.

const (
	recoveryFirstDelay = time.Second
	recoveryMaxDelay   = 30 * time.Second
)

// failure is why a failed engine refuses work.
type failure struct {
	err     error
	since   time.Time     // on the Clock
	refusal *tidemq.Error // what requests get meanwhile
}

// refusal is the error a request gets from an engine that is failed or
// closed, or nil. It reads no state guarded by e.mu.
func (e *Engine) refusal() error {
	if e.closed.Load() {
		return tidemq.ShuttingDown()
	}
	if f := e.failure.Load(); f != nil {
		return f.refusal
	}
	return nil
}

// failLocked fails the engine, unless it is failed already: it refuses
// work from now on, every long poll wakes, and the recovery loop starts.
// Called with e.mu held; it touches no queue, so it is safe after a panic.
func (e *Engine) failLocked(err error) {
	if e.failure.Load() != nil {
		return
	}
	f := &failure{err: err, since: e.clock.Now(),
		refusal: tidemq.Errorf(tidemq.ErrInternalFailure, "The server cannot write to its storage; it is recovering.")}
	if _, ok := err.(panicError); ok {
		f.refusal = tidemq.Errorf(tidemq.ErrInternalFailure, "The server hit an internal error; it is reloading its state.")
	}
	e.failure.Store(f)
	close(e.broken)
	e.log.Error("engine failed: refusing requests until its state is reloaded from storage", "err", err.Error())
	if !e.closed.Load() {
		e.wg.Add(1)
		go e.recoveryLoop()
	}
}

// recoveryLoop retries the reload with a growing delay until it succeeds
// or the engine closes.
func (e *Engine) recoveryLoop() {
	defer e.wg.Done()
	delay := recoveryFirstDelay
	for attempt := 1; ; attempt++ {
		timer := e.clock.NewTimer(delay)
		select {
		case <-e.closing:
			timer.Stop()
			return
		case <-timer.C():
		}
		e.log.Info("engine recovery: reopening the store and reloading the state", "attempt", attempt)
		err := e.reload(attempt)
		if e.onRecovery != nil {
			e.onRecovery(err)
		}
		if err == nil {
			return
		}
		delay = min(2*delay, recoveryMaxDelay)
		e.log.Warn("engine recovery failed", "attempt", attempt, "err", err.Error(), "next_attempt_in", delay)
	}
}

// reload reopens the store and rebuilds the state from it; on success the
// engine works again. On failure it stays failed and may try again.
func (e *Engine) reload(attempt int) (err error) {
	h := hold{e: e}
	defer h.guard(&err)
	h.relock()
	f := e.failure.Load()
	if f == nil || e.closed.Load() {
		return nil
	}
	start := time.Now()
	if r, ok := e.store.(storage.Reopener); ok {
		if err := r.Reopen(); err != nil {
			return err
		}
	}
	old := e.byID
	e.resetState()
	if err := e.load(); err != nil {
		return fmt.Errorf("reload state: %w", err)
	}
	// The store must take a synced write before requests come back: this
	// rewrites a key with the value it has.
	probe := e.store.NewBatch()
	probe.Set([]byte(keyNextQueue), uint64Value(e.nextQueueID))
	d, err := probe.Commit()
	if err == nil {
		err = d.Wait()
	}
	if err != nil {
		return fmt.Errorf("write to the reopened store: %w", err)
	}
	for id, q := range e.byID {
		if o := old[id]; o != nil && o.name == q.name {
			if o.stats != nil {
				q.count().Add(o.stats) // counting since the start of the process
			}
			q.lastReceive = o.lastReceive
		}
	}
	e.epoch++
	e.broken = make(chan struct{})
	e.failure.Store(nil)
	e.log.Info("engine recovered: state reloaded from storage", "down_for", e.clock.Now().Sub(f.since), "attempts", attempt,
		"queues", len(e.queues), "messages", e.countMessages(), "took", time.Since(start).Round(time.Millisecond))
	e.resumeTasks()
	return nil
}
