package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
)

// A message move task redrives a dead-letter queue in the background, in
// chunks: each chunk moves messages and records the task's progress in the
// same batch, so after a crash the count matches what was moved, and a
// RUNNING task resumes where it stopped.

const (
	prefixTask = "t/"
	// moveChunk is how many messages a task without a rate moves per lock
	// hold, so that it never stalls other requests for long.
	moveChunk = 100
)

type moveTask struct {
	tidemq.MessageMoveTask
	id string
}

type taskRecord struct {
	ID          string    `json:"id"`
	Status      string    `json:"status"`
	Source      string    `json:"source"`
	Destination string    `json:"destination,omitempty"`
	Rate        int       `json:"rate,omitempty"`
	Moved       int64     `json:"moved"`
	ToMove      int64     `json:"toMove"`
	Failure     string    `json:"failure,omitempty"`
	Started     time.Time `json:"started"`
}

func (t *moveTask) record() []byte {
	b, _ := json.Marshal(taskRecord{
		ID: t.id, Status: t.Status, Source: t.SourceARN, Destination: t.DestinationARN,
		Rate: t.MaxNumberOfMessagesPerSecond, Moved: t.ApproximateNumberOfMessagesMoved,
		ToMove: t.ApproximateNumberOfMessagesToMove, Failure: t.FailureReason, Started: t.StartedTimestamp,
	})
	return b
}

func taskFromRecord(b []byte) (*moveTask, error) {
	var r taskRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &moveTask{id: r.ID, MessageMoveTask: tidemq.MessageMoveTask{
		Status: r.Status, SourceARN: r.Source, DestinationARN: r.Destination,
		MaxNumberOfMessagesPerSecond: r.Rate, ApproximateNumberOfMessagesMoved: r.Moved,
		ApproximateNumberOfMessagesToMove: r.ToMove, FailureReason: r.Failure, StartedTimestamp: r.Started,
	}}, nil
}

// isDeadLetterQueue reports whether some queue's RedrivePolicy targets q.
func (e *Engine) isDeadLetterQueue(q *queue) bool {
	arn := q.arn()
	for _, src := range e.queues {
		if src.Redrive != nil && src.Redrive.DeadLetterTargetARN == arn {
			return true
		}
	}
	return false
}

// StartMessageMoveTask starts a redrive of a dead-letter queue.
func (e *Engine) StartMessageMoveTask(ctx context.Context, p tidemq.StartMoveTaskParams) (_ string, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return "", err
	}
	rate := p.Rate() // 0, the broker's choice: as fast as chunks go
	if err := h.lock(); err != nil {
		return "", err
	}
	src := e.queueByARN(p.SourceARN)
	running := false
	if src != nil {
		for _, t := range e.tasksBySource[src.arn()] {
			running = running || t.Active()
		}
	}
	if err := p.CheckStart(src != nil, e.queueByARN(p.DestinationARN) != nil, src != nil && e.isDeadLetterQueue(src), running); err != nil {
		h.unlock()
		return "", err
	}
	now := e.clock.Now()
	tx := e.begin()
	e.advance(src, now, tx)
	task := &moveTask{id: uuid.NewString(), MessageMoveTask: tidemq.MessageMoveTask{
		Status: tidemq.MoveTaskRunning, SourceARN: src.arn(), DestinationARN: p.DestinationARN,
		MaxNumberOfMessagesPerSecond:      rate,
		ApproximateNumberOfMessagesToMove: int64(src.nReady),
		StartedTimestamp:                  now,
	}}
	e.addTask(task)
	tx.b.Set(append([]byte(prefixTask), task.id...), task.record())
	// Started under the lock, so that a Close that follows sees the task
	// in its WaitGroup (and a Close that came first made lock fail above).
	// The runner's first step takes the lock after this commit, so its
	// batch follows this one in the log. From here on, task is read and
	// written under e.mu only.
	handle := tidemq.MoveTaskHandle{TaskID: task.id, SourceARN: task.SourceARN}.Encode()
	e.startTask(task)
	if err := e.finish(&h, tx); err != nil {
		return "", err
	}
	return handle, nil
}

func (e *Engine) addTask(t *moveTask) {
	e.tasks[t.id] = t
	e.tasksBySource[t.SourceARN] = append(e.tasksBySource[t.SourceARN], t)
}

// CancelMessageMoveTask asks a running task to stop; messages already moved
// stay moved.
func (e *Engine) CancelMessageMoveTask(ctx context.Context, p tidemq.CancelMoveTaskParams) (_ int64, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	th, err := p.Validate()
	if err != nil {
		return 0, err
	}
	if err := h.lock(); err != nil {
		return 0, err
	}
	t := e.tasks[th.TaskID]
	var found *tidemq.MessageMoveTask
	if t != nil {
		found = &t.MessageMoveTask
	}
	if err := tidemq.CheckCancel(th, e.queueByARN(th.SourceARN) != nil, found); err != nil {
		h.unlock()
		return 0, err
	}
	t.Status = tidemq.MoveTaskCancelling
	moved := t.ApproximateNumberOfMessagesMoved
	tx := e.begin()
	tx.b.Set(append([]byte(prefixTask), t.id...), t.record())
	return moved, e.finish(&h, tx)
}

// ListMessageMoveTasks lists a source queue's tasks, newest first.
func (e *Engine) ListMessageMoveTasks(ctx context.Context, p tidemq.ListMoveTasksParams) (_ []tidemq.MessageMoveTask, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	max := p.Limit()
	if err := h.lock(); err != nil {
		return nil, err
	}
	// e.mu is released by the guard
	if e.queueByARN(p.SourceARN) == nil {
		return nil, tidemq.MoveTaskSourceNotFound()
	}
	list := e.tasksBySource[p.SourceARN]
	var out []tidemq.MessageMoveTask
	for i := len(list) - 1; i >= 0 && len(out) < max; i-- {
		out = append(out, list[i].MessageMoveTask.Listed(list[i].id))
	}
	return out, nil
}

// startTask runs t in the background. The task's rate never changes, so it
// is read here, before the runner starts writing t (under e.mu).
func (e *Engine) startTask(t *moveTask) {
	e.wg.Add(1)
	go e.runTask(t, t.MaxNumberOfMessagesPerSecond)
}

// runTask moves a task's messages chunk by chunk until it completes, fails,
// is cancelled or the engine closes (a RUNNING task resumes at the next
// Open). With a rate it moves that many messages per second of the Clock.
func (e *Engine) runTask(t *moveTask, rate int) {
	defer e.wg.Done()
	tidemq.PaceMoveTask(e.clock, e.closing, rate, moveChunk, func(n int) (bool, bool) {
		return e.taskStep(t, n), false
	})
}

// taskStep moves up to chunk messages and reports whether the task ended.
//
// The task's new progress is written in the same batch as the moves, but
// shown (to ListMessageMoveTasks) only once that batch is durable and the
// moved messages are receivable: a client that sees COMPLETED finds every
// message in its destination.
func (e *Engine) taskStep(t *moveTask, chunk int) (ended bool) {
	h := hold{e: e}
	defer h.guard(nil)
	// What a panic returns: the runner stops. (A panic under the lock
	// fails the engine, whose reload resumes the task.)
	ended = true
	if h.lock() != nil {
		return true
	}
	if e.tasks[t.id] != t {
		// A reload replaced the task and resumed it (recover.go).
		h.unlock()
		return true
	}
	now := e.clock.Now()
	tx := e.begin()
	next := *t
	src := e.queueByARN(t.SourceARN)
	var fixed *queue
	if t.DestinationARN != "" {
		fixed = e.queueByARN(t.DestinationARN)
	}
	if next.StepCheck(src != nil, fixed != nil) {
		e.advance(src, now, tx)
		if size := next.StepSize(chunk); size > 0 {
			n, err := e.moveSome(src, fixed, size, now, tx, false)
			next.StepDone(n, err, src.nReady == 0)
		}
	}
	tx.b.Set(append([]byte(prefixTask), t.id...), next.record())
	if err := e.finish(&h, tx); err != nil {
		return true
	}
	h.relock()
	if e.tasks[t.id] != t {
		h.unlock()
		return true
	}
	cancelled := t.Status == tidemq.MoveTaskCancelling && next.Status != tidemq.MoveTaskCancelled
	if cancelled && next.Status == tidemq.MoveTaskRunning {
		next.Status = tidemq.MoveTaskCancelling // cancelled while this step was syncing
	}
	*t = next
	if cancelled && !next.Active() {
		// A Cancel during this step's sync wrote a CANCELLING record after
		// this step's final one; write the final state again so that the
		// store, like memory, ends with it (a CANCELLING task would resume
		// at the next Open and end CANCELLED).
		tx := e.begin()
		tx.b.Set(append([]byte(prefixTask), t.id...), next.record())
		if err := e.finish(&h, tx); err != nil {
			return true
		}
	} else {
		h.unlock()
	}
	if next.Active() {
		return false
	}
	if e.onTaskEnd != nil {
		e.onTaskEnd(next.id, next.Status)
	}
	e.log.Info("message move task ended", "source", next.SourceARN, "status", next.Status,
		"moved", next.ApproximateNumberOfMessagesMoved, "reason", next.FailureReason)
	return true
}

// moveSome moves up to max ready messages (all when max <= 0) from src to
// dst, or to each message's own source queue when dst is nil. A message
// whose destination is gone is skipped when skipMissing, and otherwise ends
// the call with QueueDoesNotExist.
func (e *Engine) moveSome(src, dst *queue, max int, now time.Time, t *txn, skipMissing bool) (int, error) {
	moved := 0
	var parked []*message
	defer func() {
		for _, m := range parked {
			src.setState(m, stateReady)
		}
	}()
	for max <= 0 || moved < max {
		m := src.oldestReady()
		if m == nil {
			break
		}
		to := dst
		if to == nil {
			to = e.queueByARN(m.DLQSource)
		}
		if to == nil || to == src {
			if !skipMissing {
				if dst == nil && m.DLQSource == "" {
					return moved, tidemq.ErrNoMoveSource
				}
				return moved, tidemq.NonExistentQueue()
			}
			// Park it out of the way so the loop goes on; it is put back.
			src.setState(m, stateInflight)
			parked = append(parked, m)
			continue
		}
		e.move(src, m, to, now, t, tidemq.MovedEvent(src.name, to.name, now))
		src.count().MovedOut++
		moved++
	}
	return moved, nil
}
