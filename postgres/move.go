package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// move transfers m from src to dst inside the caller's transaction (one
// statement, moveSQL, queued on batch): the message is never in both
// queues nor in neither. What the move does to the message is
// tidemq.MoveRuleOf's. The caller announces dst (notify and wake).
func (b *Broker) move(ctx context.Context, tx pgx.Tx, batch *pgx.Batch, src *queue, m *message, dst *queue, now time.Time, ev tidemq.HistoryEvent) error {
	n := message{StoredMessage: m.Moved(tidemq.MoveRuleOf(ev.Kind, src.arn, dst.fifo), tidemq.StampOf(now), ev), queueID: dst.id}
	n.VisibleAt = tidemq.StampOf(now)
	// n is not held: its story is settled (the callers settle m first).
	if err := tx.QueryRow(ctx, `SELECT nextval('message_seq')`).Scan(&n.seq); err != nil {
		return err
	}
	batch.Queue(moveSQL, append(n.insertArgs(), src.id, m.seq)...)
	b.stat(dst.id, func(s *tidemq.QueueStats) { s.MovedIn++ })
	return nil
}

// MoveMessages moves up to p.Max visible messages (all, when Max is 0) from
// p.Source to p.Destination, or back to each message's source queue when
// Destination is "". Each message moves atomically. Messages whose source
// queue no longer exists stay where they are.
func (b *Broker) MoveMessages(ctx context.Context, p tidemq.MoveMessagesParams) (*tidemq.MoveMessagesResult, error) {
	var res *tidemq.MoveMessagesResult
	var wake []string
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		src, err := b.getQueue(ctx, tx, p.Source, true)
		if err != nil {
			return err
		}
		var fixed *queue
		if p.Destination != "" {
			if fixed, err = b.getQueue(ctx, tx, p.Destination, false); err != nil {
				return err
			}
			if fixed.id == src.id {
				return tidemq.MoveToSource(fixed.arn)
			}
		}
		now := b.clock.Now()
		if err := b.expire(ctx, tx, src, now); err != nil {
			return err
		}
		moved, w, err := b.moveSome(ctx, tx, src, fixed, p.Max, now, true)
		if err != nil {
			return err
		}
		wake = w
		c, err := b.counts(ctx, tx, src.id, stampOf(now))
		if err != nil {
			return err
		}
		res = &tidemq.MoveMessagesResult{Moved: moved, Remaining: c.visible}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.wake(wake...)
	return res, nil
}

// moveSome moves up to max ready messages (all when max <= 0) from src to
// dst, or to each message's own source queue when dst is nil, oldest
// first. A message whose destination is gone is skipped when skipMissing,
// and otherwise ends the call with QueueDoesNotExist, or
// tidemq.ErrNoMoveSource when it has no source to go back to. It returns
// the queues that got messages, for the caller to wake after its commit.
func (b *Broker) moveSome(ctx context.Context, tx pgx.Tx, src, dst *queue, max int, now time.Time, skipMissing bool) (int, []string, error) {
	moved := 0
	byARN := map[string]*queue{}
	into := map[string]bool{}
	skip := map[int64]bool{}
	var wake []string
	for max <= 0 || moved < max {
		want := 100
		if max > 0 {
			want = min(want, max-moved)
		}
		cands, err := b.candidates(ctx, tx, src, now, want+len(skip))
		if err != nil {
			return moved, nil, err
		}
		batch := &pgx.Batch{}
		progress := false
		for _, m := range cands {
			if skip[m.seq] || (max > 0 && moved >= max) {
				continue
			}
			to := dst
			if to == nil {
				var ok bool
				if to, ok = byARN[m.DLQSource]; !ok {
					if to, err = b.queueByARN(ctx, tx, m.DLQSource); err != nil {
						return moved, nil, err
					}
					byARN[m.DLQSource] = to
				}
			}
			if to == nil || to.id == src.id {
				if !skipMissing {
					if err := tx.SendBatch(ctx, batch).Close(); err != nil {
						return moved, nil, err
					}
					if dst == nil && m.DLQSource == "" {
						return moved, wake, tidemq.ErrNoMoveSource
					}
					return moved, wake, tidemq.NonExistentQueue()
				}
				skip[m.seq] = true
				continue
			}
			m.settle(stampOf(now), src.name)
			if err := b.move(ctx, tx, batch, src, m, to, now, tidemq.MovedEvent(src.name, to.name, now)); err != nil {
				return moved, nil, err
			}
			b.stat(src.id, func(s *tidemq.QueueStats) { s.MovedOut++ })
			moved++
			progress = true
			if !into[to.name] {
				into[to.name] = true
				wake = append(wake, to.name)
			}
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return moved, nil, err
		}
		if !progress {
			break
		}
	}
	return moved, wake, nil
}

// CaptureExpiredTag is tidemq.CaptureExpiredTag.
const CaptureExpiredTag = tidemq.CaptureExpiredTag

// captureTarget returns the queue q's expired messages are captured into,
// or nil to drop them.
func (b *Broker) captureTarget(ctx context.Context, tx pgx.Tx, q *queue) *queue {
	name := q.tags[CaptureExpiredTag]
	if name == "" {
		return nil
	}
	dst, err := b.getQueue(ctx, tx, name, false)
	if err != nil {
		dst, _ = b.queueByARN(ctx, tx, name)
	}
	if dst == nil || dst.id == q.id || dst.fifo != q.fifo {
		return nil
	}
	return dst
}

// captureExpired moves q's messages enqueued at or before cutoff into dst.
func (b *Broker) captureExpired(ctx context.Context, tx pgx.Tx, q, dst *queue, cutoff int64, now time.Time) (int, error) {
	rows, err := tx.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND enqueued_at <= $2
		ORDER BY enqueued_at, seq FOR UPDATE`, q.id, cutoff)
	if err != nil {
		return 0, err
	}
	ms, err := collectMessages(rows)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	batch := &pgx.Batch{}
	for _, m := range ms {
		m.settle(stampOf(now), q.name)
		if err := b.move(ctx, tx, batch, q, m, dst, now, tidemq.CapturedEvent(q.name, q.Retention, dst.name, now)); err != nil {
			return 0, err
		}
	}
	// The one NOTIFY left inside a transaction (wake.go): expiry runs
	// where a queue is read, under many callers, and a capture is rare.
	batch.Queue(`SELECT pg_notify($1, $2)`, b.channel, dst.name)
	b.log.Info("messages expired", "queue", q.name, "count", len(ms), "reason", "retention period passed", "captured_into", dst.name)
	return len(ms), tx.SendBatch(ctx, batch).Close()
}
