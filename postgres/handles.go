package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// DeleteMessages deletes messages by receipt handle, a request's in the
// statement of one group commit (commit.go) after the queue's row was
// read.
//
// On a standard queue any handle the message was ever given deletes it,
// even after its visibility timeout or while another consumer holds it; a
// handle for a message already gone succeeds too. On a FIFO queue only the
// latest handle works, and only while the message is in flight.
func (b *Broker) DeleteMessages(ctx context.Context, p tidemq.DeleteMessagesParams) ([]error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q, err := b.messageQueue(ctx, p.Queue)
	if err != nil {
		return nil, err
	}
	errs, err := b.deleteOn(ctx, q, p.Entries)
	return errs, b.failure(ctx, err)
}

// deleteOn deletes with the next group commit (commit.go); the handles it
// did not delete (already gone, or stale) are told apart afterwards, one
// by one.
func (b *Broker) deleteOn(ctx context.Context, q *queue, entries []tidemq.DeleteEntry) ([]error, error) {
	errs := make([]error, len(entries))
	rs := make([]tidemq.Receipt, len(entries))
	var seqs []int64
	var counts []int32
	for i, entry := range entries {
		r, err := b.receipts().Open(entry.ReceiptHandle, uint64(q.id))
		if err != nil {
			errs[i] = err
			continue
		}
		rs[i] = r
		seqs = append(seqs, int64(r.Seq))
		counts = append(counts, int32(r.Count))
	}
	if len(seqs) == 0 {
		return errs, nil
	}
	rows := &deleteRows{qid: q.id, fifo: q.fifo, name: q.name, seqs: seqs, counts: counts}
	if err := b.submit(ctx, &writeReq{del: rows}); err != nil {
		return nil, err
	}
	gone := rows.gone
	now := b.clock.Now()
	deleted := map[int64]bool{}
	for _, s := range gone {
		deleted[s] = true
	}
	var rest []int
	for i := range entries {
		if errs[i] == nil && !deleted[int64(rs[i].Seq)] {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		// Already deleted (success, as on SQS), or a stale handle: which,
		// the message's row tells.
		err := b.inTx(ctx, func(tx pgx.Tx) error {
			for _, i := range rest {
				errs[i] = nil
				r, m, err := b.lookupReceipt(ctx, tx, q, entries[i].ReceiptHandle)
				switch {
				case err != nil && tidemq.AsError(err).Code != tidemq.ErrInternalFailure:
					errs[i] = err
				case err != nil:
					return err
				case m == nil:
				case q.handled(r, m, now).Stale():
					errs[i] = tidemq.ExpiredReceiptHandle(entries[i].ReceiptHandle)
				default: // changed between the two looks: delete it now
					if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE queue_id = $1 AND seq = $2`, q.id, m.seq); err != nil {
						return err
					}
					gone = append(gone, m.seq)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	b.stat(q.id, func(s *tidemq.QueueStats) { s.Deleted += uint64(len(gone)) })
	if len(gone) > 0 && q.fifo {
		b.waiters.wake(q.name)
	}
	return errs, nil
}

// ChangeMessageVisibility changes the visibility timeout of received
// messages, counted from now.
func (b *Broker) ChangeMessageVisibility(ctx context.Context, p tidemq.ChangeVisibilityParams) ([]error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var errs []error
	changed := false
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, false)
		if err != nil {
			return err
		}
		now := b.clock.Now()
		errs = make([]error, len(p.Entries))
		changed = false
		for i := range p.Entries {
			ok, err := b.changeVisibility(ctx, tx, q, &p.Entries[i], now)
			if err != nil && tidemq.AsError(err).Code == tidemq.ErrInternalFailure {
				return err
			}
			errs[i] = err
			changed = changed || ok
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if changed {
		b.wake(b.canonical(p.Queue))
	}
	return errs, nil
}

// changeVisibility applies one entry; it reports whether it wrote.
func (b *Broker) changeVisibility(ctx context.Context, tx pgx.Tx, q *queue, entry *tidemq.ChangeVisibilityEntry, now time.Time) (bool, error) {
	if err := entry.Validate(); err != nil {
		return false, err
	}
	r, m, err := b.lookupReceipt(ctx, tx, q, entry.ReceiptHandle)
	if err != nil {
		return false, err
	}
	c, err := entry.Decide(q.handled(r, m, now), now)
	if err != nil || !c.Write {
		return false, err
	}
	m.settle(stampOf(now), q.name)
	if c.Release {
		m.AddHistory(tidemq.ReleasedEvent(q.name, now))
		m.held = false
	}
	m.VisibleAt = tidemq.StampOf(c.VisibleAt)
	_, err = tx.Exec(ctx, updateStateSQL, m.stateArgs()...)
	return true, err
}

// maxFailureHandles bounds one RecordFailure call: the largest batch a
// Lambda-style consumer can be handed.
const maxFailureHandles = 10000

// RecordFailure appends a consumer-failed event to the history of each
// message named by a receipt handle, in one transaction. Only the latest
// receive's handle counts. See tidemq.FailureRecorder.
func (b *Broker) RecordFailure(ctx context.Context, p tidemq.RecordFailureParams) ([]error, error) {
	if len(p.ReceiptHandles) > maxFailureHandles {
		return nil, tidemq.TooManyReceiptHandles(len(p.ReceiptHandles))
	}
	var errs []error
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, false)
		if err != nil {
			return err
		}
		now := b.clock.Now()
		errs = make([]error, len(p.ReceiptHandles))
		for i, h := range p.ReceiptHandles {
			r, m, err := b.lookupReceipt(ctx, tx, q, h)
			switch {
			case err != nil && tidemq.AsError(err).Code != tidemq.ErrInternalFailure:
				errs[i] = err
			case err != nil:
				return err
			case m == nil:
				errs[i] = tidemq.MessageDoesNotExist(h)
			case !q.handled(r, m, now).Latest():
				errs[i] = tidemq.ExpiredReceiptHandle(h)
			default:
				m.settle(stampOf(now), q.name)
				m.AddHistory(tidemq.FailedEvent(q.name, p.Client, p.Detail, now))
				if _, err := tx.Exec(ctx, updateStateSQL, m.stateArgs()...); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// PeekMessages returns messages, oldest first, without receiving them: no
// receive count, visibility or history changes, and no receipt handles.
func (b *Broker) PeekMessages(ctx context.Context, p tidemq.PeekMessagesParams) ([]*tidemq.Message, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	max := p.Limit()
	var out []*tidemq.Message
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, false)
		if err != nil {
			return err
		}
		now := b.clock.Now()
		if err := b.expire(ctx, tx, q, now); err != nil {
			return err
		}
		// A message never received whose visible_at is ahead is delayed;
		// one received, in flight.
		rows, err := tx.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND ($2 OR visible_at <= $3 OR ($5 AND receive_count = 0))
			ORDER BY enqueued_at, seq LIMIT $4`, q.id, p.IncludeInflight, stampOf(now), max, p.IncludeDelayed)
		if err != nil {
			return err
		}
		ms, err := collectMessages(rows)
		if err != nil {
			return err
		}
		out = make([]*tidemq.Message, len(ms))
		for i, m := range ms {
			m.settle(stampOf(now), q.name)
			out[i] = m.snapshot(q, "")
			if m.VisibleAt > tidemq.StampOf(now) {
				if m.ReceiveCount == 0 {
					out[i].DelayedUntil = timeOf(m.VisibleAt)
				} else {
					out[i].InvisibleUntil = timeOf(m.VisibleAt)
				}
			}
		}
		return nil
	})
	return out, err
}
