package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// A message move task redrives a dead-letter queue in the background, in
// steps: each step locks the task's row, moves up to a chunk of messages
// and records the progress in one transaction, so the count always
// matches what was moved. The node that starts a task runs it; a node
// that opens resumes the tasks left RUNNING. Until leases exist (a later
// phase) several nodes may run the same task: their steps take turns on
// the row and never move past the task's count, so the outcome is the
// same, only the pacing of a rated task is off.

// moveChunk is how many messages a step of a task without a rate moves.
const moveChunk = 100

const taskCols = `id, source_arn, destination_arn, rate, moved, to_move, status, failure, started`

type task struct {
	id string
	tidemq.MessageMoveTask
}

func scanTask(row pgx.Row) (*task, error) {
	t := &task{}
	var started int64
	err := row.Scan(&t.id, &t.SourceARN, &t.DestinationARN, &t.MaxNumberOfMessagesPerSecond, &t.ApproximateNumberOfMessagesMoved,
		&t.ApproximateNumberOfMessagesToMove, &t.Status, &t.FailureReason, &started)
	t.StartedTimestamp = timeOf(started)
	return t, err
}

// StartMessageMoveTask starts a redrive of a dead-letter queue.
func (b *Broker) StartMessageMoveTask(ctx context.Context, p tidemq.StartMoveTaskParams) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	rate := p.Rate()
	var handle, id string
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		src, err := b.queueByARN(ctx, tx, p.SourceARN)
		if err != nil {
			return err
		}
		if src == nil {
			return p.CheckStart(false, false, false, false)
		}
		if src, err = b.getQueue(ctx, tx, src.name, true); err != nil { // one start at a time per source
			return err
		}
		var dst *queue
		if p.DestinationARN != "" {
			if dst, err = b.queueByARN(ctx, tx, p.DestinationARN); err != nil {
				return err
			}
		}
		var isDLQ, running bool
		if dst != nil || p.DestinationARN == "" {
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM queues WHERE dlq_target = $1),
				EXISTS (SELECT 1 FROM move_tasks WHERE source_arn = $1 AND status IN ('RUNNING', 'CANCELLING'))`,
				src.arn).Scan(&isDLQ, &running); err != nil {
				return err
			}
		}
		if err := p.CheckStart(true, dst != nil, isDLQ, running); err != nil {
			return err
		}
		now := b.clock.Now()
		if err := b.expire(ctx, tx, src, now); err != nil {
			return err
		}
		c, err := b.counts(ctx, tx, src.id, stampOf(now))
		if err != nil {
			return err
		}
		id = uuid.NewString()
		if _, err := tx.Exec(ctx, `INSERT INTO move_tasks (id, source_arn, destination_arn, rate, to_move, status, started)
			VALUES ($1, $2, $3, $4, $5, 'RUNNING', $6)`, id, src.arn, p.DestinationARN, rate, c.visible, stampOf(now)); err != nil {
			return err
		}
		handle = tidemq.MoveTaskHandle{TaskID: id, SourceARN: src.arn}.Encode()
		return nil
	})
	if err != nil {
		return "", err
	}
	b.startTask(id, rate)
	return handle, nil
}

// CancelMessageMoveTask asks a running task to stop; messages already moved
// stay moved.
func (b *Broker) CancelMessageMoveTask(ctx context.Context, p tidemq.CancelMoveTaskParams) (int64, error) {
	th, err := p.Validate()
	if err != nil {
		return 0, err
	}
	var moved int64
	err = b.inTx(ctx, func(tx pgx.Tx) error {
		src, err := b.queueByARN(ctx, tx, th.SourceARN)
		if err != nil {
			return err
		}
		if src == nil {
			return tidemq.CheckCancel(th, false, nil)
		}
		t, err := scanTask(tx.QueryRow(ctx, `SELECT `+taskCols+` FROM move_tasks WHERE id = $1 FOR UPDATE`, th.TaskID))
		var found *tidemq.MessageMoveTask
		switch {
		case err == nil:
			found = &t.MessageMoveTask
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if err := tidemq.CheckCancel(th, true, found); err != nil {
			return err
		}
		moved = t.ApproximateNumberOfMessagesMoved
		_, err = tx.Exec(ctx, `UPDATE move_tasks SET status = 'CANCELLING' WHERE id = $1`, t.id)
		return err
	})
	return moved, err
}

// ListMessageMoveTasks lists a source queue's tasks, newest first.
func (b *Broker) ListMessageMoveTasks(ctx context.Context, p tidemq.ListMoveTasksParams) ([]tidemq.MessageMoveTask, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	max := p.Limit()
	var out []tidemq.MessageMoveTask
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		out = nil
		src, err := b.queueByARN(ctx, tx, p.SourceARN)
		if err != nil {
			return err
		}
		if src == nil {
			return tidemq.MoveTaskSourceNotFound()
		}
		rows, err := tx.Query(ctx, `SELECT `+taskCols+` FROM move_tasks WHERE source_arn = $1 ORDER BY ord DESC LIMIT $2`, p.SourceARN, max)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanTask(rows)
			if err != nil {
				return err
			}
			out = append(out, t.MessageMoveTask.Listed(t.id))
		}
		return rows.Err()
	})
	return out, err
}

// resumeTasks starts a runner for every task left RUNNING or CANCELLING.
func (b *Broker) resumeTasks(ctx context.Context) error {
	rows, err := b.pool.Query(ctx, `SELECT id, rate FROM move_tasks WHERE status IN ('RUNNING', 'CANCELLING') ORDER BY ord`)
	if err != nil {
		return err
	}
	type r struct {
		id   string
		rate int
	}
	var ts []r
	for rows.Next() {
		var x r
		if err := rows.Scan(&x.id, &x.rate); err != nil {
			rows.Close()
			return err
		}
		ts = append(ts, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range ts {
		b.log.Info("resuming message move task", "task", t.id)
		b.startTask(t.id, t.rate)
	}
	return nil
}

// startTask runs a task in the background unless this node runs it
// already.
func (b *Broker) startTask(id string, rate int) {
	b.tasksMu.Lock()
	defer b.tasksMu.Unlock()
	if b.running[id] || b.closed.Load() {
		return
	}
	b.running[id] = true
	b.wg.Add(1)
	go b.runTask(id, rate)
}

// runTask moves a task's messages step by step until it ends or the
// broker closes (a RUNNING task resumes at the next Open). With a rate it
// moves that many messages per second of the Clock.
func (b *Broker) runTask(id string, rate int) {
	defer b.wg.Done()
	defer func() {
		b.tasksMu.Lock()
		delete(b.running, id)
		b.tasksMu.Unlock()
	}()
	ctx, cancel := b.closingContext(context.Background())
	defer cancel()
	retry := 100 * time.Millisecond
	tidemq.PaceMoveTask(b.clock, b.closing, rate, moveChunk, func(n int) (bool, bool) {
		ended, idle, err := b.taskStep(ctx, id, n)
		if err == nil && idle {
			// Nothing could move now (the groups it would move into, or
			// take from, are held): look again shortly, not at once.
			select {
			case <-time.After(idleStepRetry):
			case <-b.closing:
				return true, false
			}
			return false, true
		}
		if err == nil {
			return ended, false
		}
		if ctx.Err() != nil {
			return true, false
		}
		b.log.Warn("postgres: move task step failed; retrying", "task", id, "err", err)
		select {
		case <-time.After(retry):
		case <-b.closing:
			return true, false
		}
		retry = min(2*retry, 10*time.Second)
		return false, true
	})
}

// idleStepRetry is how long a move task waits after a step that moved
// nothing while its source still had messages to move: all of them were
// in groups other transactions held (a FIFO source's, candidates, or the
// FIFO destination's, move).
const idleStepRetry = 20 * time.Millisecond

// taskStep moves up to chunk messages and reports whether the task ended,
// and whether it is idle: it moved nothing though its source has messages
// left to move.
func (b *Broker) taskStep(ctx context.Context, id string, chunk int) (bool, bool, error) {
	ended, idle := false, false
	var wake []string
	var final *task
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		ended, idle, wake, final = false, false, nil, nil
		t, err := scanTask(tx.QueryRow(ctx, `SELECT `+taskCols+` FROM move_tasks WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			ended = true
			return nil
		}
		if err != nil {
			return err
		}
		if !t.Active() {
			ended = true
			return nil
		}
		now := b.clock.Now()
		src, err := b.queueByARN(ctx, tx, t.SourceARN)
		if err != nil {
			return err
		}
		var fixed *queue
		if t.DestinationARN != "" {
			if fixed, err = b.queueByARN(ctx, tx, t.DestinationARN); err != nil {
				return err
			}
		}
		if t.StepCheck(src != nil, fixed != nil) {
			if src.fifo {
				// Moves of src take turns on its row; the groups they
				// take from are locked as receives lock them (candidates).
				if src, err = b.getQueue(ctx, tx, src.name, true); err != nil {
					return err
				}
			}
			if err := b.expire(ctx, tx, src, now); err != nil {
				return err
			}
			if size := t.StepSize(chunk); size > 0 {
				n, w, err := b.moveSome(ctx, tx, src, fixed, size, now, false)
				wake = w
				var te *tidemq.Error
				if err != nil && !errors.Is(err, tidemq.ErrNoMoveSource) && !errors.As(err, &te) {
					return err // the database's: the step is retried
				}
				c, cerr := b.counts(ctx, tx, src.id, stampOf(now))
				if cerr != nil {
					return cerr
				}
				t.StepDone(n, err, c.visible == 0)
				idle = n == 0 && t.Active()
			}
		}
		if !t.Active() {
			ended = true
			final = t
		}
		_, err = tx.Exec(ctx, `UPDATE move_tasks SET moved = $2, status = $3, failure = $4 WHERE id = $1`,
			t.id, t.ApproximateNumberOfMessagesMoved, t.Status, t.FailureReason)
		return err
	})
	if err != nil {
		return false, false, err
	}
	b.wake(wake...)
	if final != nil {
		b.log.Info("message move task ended", "source", final.SourceARN, "status", final.Status,
			"moved", final.ApproximateNumberOfMessagesMoved, "reason", final.FailureReason)
	}
	return ended, idle, nil
}
