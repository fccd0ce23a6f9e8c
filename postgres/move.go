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
//
// Into a FIFO queue the moved message takes its sequence number as a send
// does (fifoSendLockSQL, send.go): holding its group's lock in dst, to the
// caller's commit, so that within a group sequence numbers follow commit
// order and no receive serves a message while an earlier one of its group
// is still to come. Unlike a send it never waits for the lock
// (moveFIFOSeqSQL): a move already holds the lock of the group it takes
// from (candidates), or the source queue's row, and a move the other way
// (a redrive racing a dead-letter move) or a receive would wait for it in
// a circle. When another transaction holds the group, move does nothing
// and reports false: the message stays where it is, for a later pass
// (callers leave the rest of its source group where it is too, so that it
// keeps its order). A send to the group waits for the mover's commit; the
// mover never waits for a send: it takes the groups' locks only with the
// try form, and the dedup rows a send locks are deleted with SKIP LOCKED
// (expire, queue.go).
func (b *Broker) move(ctx context.Context, tx pgx.Tx, batch *pgx.Batch, src *queue, m *message, dst *queue, now time.Time, ev tidemq.HistoryEvent) (bool, error) {
	n := message{StoredMessage: m.Moved(tidemq.MoveRuleOf(ev.Kind, src.arn, dst.fifo), tidemq.StampOf(now), ev), queueID: dst.id}
	n.VisibleAt = tidemq.StampOf(now)
	// n is not held: its story is settled (the callers settle m first).
	if dst.fifo {
		var seq *int64
		if err := tx.QueryRow(ctx, moveFIFOSeqSQL, dst.id, n.Group).Scan(&seq); err != nil {
			return false, err
		}
		if seq == nil {
			return false, nil // the group is busy: the message stays
		}
		n.seq = *seq
	} else if err := tx.QueryRow(ctx, `SELECT nextval('message_seq')`).Scan(&n.seq); err != nil {
		return false, err
	}
	batch.Queue(moveSQL, append(n.insertArgs(), src.id, m.seq)...)
	b.stat(dst.id, func(s *tidemq.QueueStats) { s.MovedIn++ })
	return true, nil
}

// moveFIFOSeqSQL takes the lock of group $2 of FIFO queue $1 without
// waiting and, only when it got it, a sequence number; NULL when another
// transaction holds the group. (One round trip, as the plain nextval.)
var moveFIFOSeqSQL = `SELECT CASE WHEN pg_try_advisory_xact_lock(` + fifoGroupKey("$2::text") + `) THEN nextval('message_seq') END`

// MoveMessages moves up to p.Max visible messages (all, when Max is 0) from
// p.Source to p.Destination, or back to each message's source queue when
// Destination is "". Each message moves atomically. Messages whose source
// queue no longer exists stay where they are, as do, for now, those whose
// group in a FIFO destination another transaction holds (move): Remaining
// counts them.
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
// tidemq.ErrNoMoveSource when it has no source to go back to. A message
// whose group in a FIFO destination is busy (move) stays, with the rest of
// its group in src behind it; a move task's step then moves fewer than
// asked, and the next step tries again. It returns the queues that got
// messages, for the caller to wake after its commit.
func (b *Broker) moveSome(ctx context.Context, tx pgx.Tx, src, dst *queue, max int, now time.Time, skipMissing bool) (int, []string, error) {
	moved := 0
	byARN := map[string]*queue{}
	into := map[string]bool{}
	// What stays is left out of the next rounds' candidates (x), so that
	// each round reads only messages it has not seen: a redrive of N
	// messages reads O(N) rows, whatever stays. Of a FIFO src, the group
	// of a message that stays (its destination group is busy, move, or
	// its destination is gone) stays whole behind it, as the embedded
	// engine's parked message holds its group. Of a standard src, the
	// messages whose destination is gone stay (by their dlq_source), and
	// one whose destination group is busy (a FIFO destination) stays.
	var x except
	isBusy, isGone := map[string]bool{}, map[string]bool{}
	stay := func(m *message, busyGroup bool) {
		switch {
		case src.fifo:
			if !isBusy[m.Group] {
				isBusy[m.Group] = true
				x.groups = append(x.groups, m.Group)
			}
		case busyGroup:
			x.seqs = append(x.seqs, m.seq)
		case !isGone[m.DLQSource]:
			isGone[m.DLQSource] = true
			x.sources = append(x.sources, m.DLQSource)
		}
	}
	var wake []string
	for max <= 0 || moved < max {
		want := 100
		if max > 0 {
			want = min(want, max-moved)
		}
		cands, err := b.candidates(ctx, tx, src, now, want, x)
		if err != nil {
			return moved, nil, err
		}
		if len(cands) == 0 {
			break
		}
		batch := &pgx.Batch{}
		for _, m := range cands {
			if max > 0 && moved >= max {
				break
			}
			if (src.fifo && isBusy[m.Group]) || (!src.fifo && isGone[m.DLQSource]) {
				continue // behind one that stays, in this round
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
				stay(m, false)
				continue
			}
			m.settle(stampOf(now), src.name)
			ok, err := b.move(ctx, tx, batch, src, m, to, now, tidemq.MovedEvent(src.name, to.name, now))
			if err != nil {
				return moved, nil, err
			}
			if !ok {
				stay(m, true)
				continue
			}
			b.stat(src.id, func(s *tidemq.QueueStats) { s.MovedOut++ })
			moved++
			if !into[to.name] {
				into[to.name] = true
				wake = append(wake, to.name)
			}
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return moved, nil, err
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

// captureExpired moves q's messages enqueued at or before cutoff into dst
// and returns how many it moved. A message whose group in dst is busy
// (move) stays, with the rest of its group, for the next pass of expire:
// receives leave it out already, and only a capture takes it away.
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
	busy := map[string]bool{}
	moved := 0
	for _, m := range ms {
		if busy[m.Group] {
			continue
		}
		m.settle(stampOf(now), q.name)
		ok, err := b.move(ctx, tx, batch, q, m, dst, now, tidemq.CapturedEvent(q.name, q.Retention, dst.name, now))
		if err != nil {
			return 0, err
		}
		if !ok {
			busy[m.Group] = true
			continue
		}
		moved++
	}
	if moved == 0 {
		return 0, nil
	}
	// The one NOTIFY left inside a transaction (wake.go): expiry runs
	// where a queue is read, under many callers, and a capture is rare.
	batch.Queue(`SELECT pg_notify($1, $2)`, b.channel, dst.name)
	b.log.Info("messages expired", "queue", q.name, "count", moved, "reason", "retention period passed", "captured_into", dst.name,
		"left_for_next_pass", len(ms)-moved)
	return moved, tx.SendBatch(ctx, batch).Close()
}
