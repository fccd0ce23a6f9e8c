package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// SendMessages enqueues messages, all of a request in one transaction. A
// FIFO queue's row is locked for the send, so that its sequence numbers
// follow commit order and the deduplication check and the insert are one
// step.
func (b *Broker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var results []tidemq.SendResult
	var qid int64
	var sent, dups uint64
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, false)
		if err != nil {
			return err
		}
		if q.fifo {
			if err := p.ValidateFIFO(q.contentDedup); err != nil {
				return err
			}
			if q, err = b.getQueue(ctx, tx, p.Queue, true); err != nil {
				return err
			}
		}
		qid = q.id
		sent, dups = 0, 0
		now := b.clock.Now()
		sender := p.Client.AccessKey
		if sender == "" {
			sender = b.acct
		}
		results = make([]tidemq.SendResult, len(p.Entries))
		batch := &pgx.Batch{}
		for i := range p.Entries {
			entry := &p.Entries[i]
			res := &results[i]
			res.ID = entry.ID
			if err := entry.Validate(q.fifo, q.maxSize); err != nil {
				res.Err = err
				continue
			}
			m := &message{queueID: q.id, body: entry.Body, attrs: entry.Attributes, sysAttrs: entry.SystemAttributes,
				group: entry.MessageGroupID, sender: sender, sent: stampOf(now), enqueued: stampOf(now)}
			delay := q.delay
			if entry.DelaySeconds != nil && !q.fifo {
				delay = time.Duration(*entry.DelaySeconds) * time.Second
			}
			m.visibleAt = stampOf(now.Add(delay))
			var key string
			if q.fifo {
				m.dedupID = entry.MessageDeduplicationID
				if m.dedupID == "" {
					sum := sha256.Sum256([]byte(entry.Body))
					m.dedupID = hex.EncodeToString(sum[:])
				}
				key = m.dedupID
				if q.groupDedup {
					key = m.group + " " + key // tokens hold no space
				}
				var id string
				var seq int64
				err := tx.QueryRow(ctx, `SELECT message_id, seq FROM dedup WHERE queue_id = $1 AND key = $2 AND expires > $3`,
					q.id, key, stampOf(now)).Scan(&id, &seq)
				if err == nil {
					res.MessageID, res.SequenceNumber = id, formatSeq(seq)
					dups++
					continue
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
			if err := tx.QueryRow(ctx, `SELECT nextval('message_seq')`).Scan(&m.seq); err != nil {
				return err
			}
			m.id = uuid.NewString()
			res.MessageID = m.id
			if q.fifo {
				res.SequenceNumber = formatSeq(m.seq)
				if _, err := tx.Exec(ctx, `INSERT INTO dedup (queue_id, key, message_id, seq, expires) VALUES ($1, $2, $3, $4, $5)
					ON CONFLICT (queue_id, key) DO UPDATE SET message_id = $3, seq = $4, expires = $5`,
					q.id, key, m.id, m.seq, stampOf(now.Add(tidemq.DedupWindow))); err != nil {
					return err
				}
			}
			batch.Queue(insertSQL, m.insertArgs()...)
			sent++
		}
		if sent == 0 {
			return nil
		}
		batch.Queue(`SELECT pg_notify($1, $2)`, b.channel, q.name)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, err
	}
	b.stat(qid, func(s *tidemq.QueueStats) { s.Sent += sent; s.Duplicates += dups })
	if sent > 0 {
		b.waiters.wake(p.Queue)
	}
	return results, nil
}
