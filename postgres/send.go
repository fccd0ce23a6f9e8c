package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// SendMessages enqueues messages, all of a request at once: on a standard
// queue in one statement (sendStandard), on a FIFO queue in one
// transaction that locks the queue's row, so that its sequence numbers
// follow commit order and the deduplication check and the insert are one
// step.
func (b *Broker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	conn, q, err := b.acquireQueue(ctx, p.Queue)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if !q.fifo {
		conn.Release() // the group's committer writes it
		res, err := b.sendStandard(ctx, q, p)
		return res, b.failure(ctx, err)
	}
	return b.sendFIFO(ctx, conn, p)
}

// sendStandard sends to a standard queue with the next group commit
// (commit.go): one statement for the group, its messages' instants the
// Clock's once the committer holds its connection.
func (b *Broker) sendStandard(ctx context.Context, q *queue, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	sender := p.SenderID(b.acct)
	results := p.Results(false, q.MaxSize)
	var ids, bodies []string
	var attrs, sys [][]byte
	var delays []int64
	var groups []string
	for i := range p.Entries {
		entry, res := &p.Entries[i], &results[i]
		if res.Err != nil {
			continue
		}
		delay := q.SendDelay(entry, false)
		res.MessageID = uuid.NewString()
		ids = append(ids, res.MessageID)
		bodies = append(bodies, entry.Body)
		attrs = append(attrs, jsonOrNil(entry.Attributes, len(entry.Attributes) == 0))
		sys = append(sys, jsonOrNil(entry.SystemAttributes, len(entry.SystemAttributes) == 0))
		delays = append(delays, int64(delay))
		groups = append(groups, entry.MessageGroupID)
	}
	if len(ids) == 0 {
		return results, nil
	}
	rows := &sendRows{qid: q.id, sender: sender, ids: ids, bodies: bodies, attrs: attrs, sys: sys, delays: delays, groups: groups, notify: q.name}
	if err := b.submit(ctx, &writeReq{send: rows}); err != nil {
		if isForeignKeyViolation(err) {
			return nil, tidemq.NonExistentQueue() // deleted since it was read
		}
		return nil, err
	}
	b.stat(q.id, func(s *tidemq.QueueStats) { s.Sent += uint64(rows.written) })
	b.waiters.wake(q.name)
	return results, nil
}

// sendFIFO sends to a FIFO queue in one transaction on conn.
func (b *Broker) sendFIFO(ctx context.Context, conn *pgxpool.Conn, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	var results []tidemq.SendResult
	var qid int64
	var sent, dups uint64
	err := b.inTxOn(ctx, conn, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, false)
		if err != nil {
			return err
		}
		if q.fifo {
			if err := p.ValidateFIFO(q.ContentDedup); err != nil {
				return err
			}
			if q, err = b.getQueue(ctx, tx, p.Queue, true); err != nil {
				return err
			}
		}
		qid = q.id
		sent, dups = 0, 0
		now := b.clock.Now()
		sender := p.SenderID(b.acct)
		results = p.Results(q.fifo, q.MaxSize)
		msgs := make([]*message, len(p.Entries))
		keys := make([]string, len(p.Entries))
		var lookup []string
		for i := range p.Entries {
			entry := &p.Entries[i]
			if results[i].Err != nil {
				continue
			}
			m := &message{queueID: q.id, body: entry.Body, attrs: entry.Attributes, sysAttrs: entry.SystemAttributes,
				group: entry.MessageGroupID, sender: sender, sent: stampOf(now), enqueued: stampOf(now)}
			m.visibleAt = stampOf(now.Add(q.SendDelay(entry, q.fifo)))
			if q.fifo {
				m.dedupID = tidemq.DeduplicationID(entry.MessageDeduplicationID, entry.Body)
				keys[i] = q.DedupKey(m.group, m.dedupID)
				lookup = append(lookup, keys[i])
			}
			msgs[i] = m
		}
		// The deduplication window: what was sent within it, and earlier
		// entries of this request.
		type sentAs struct {
			id  string
			seq int64
		}
		window := map[string]sentAs{}
		if len(lookup) > 0 {
			rows, err := tx.Query(ctx, `SELECT key, message_id, seq FROM dedup WHERE queue_id = $1 AND key = ANY($2) AND expires > $3`,
				q.id, lookup, stampOf(now))
			if err != nil {
				return err
			}
			for rows.Next() {
				var k string
				var d sentAs
				if err := rows.Scan(&k, &d.id, &d.seq); err != nil {
					rows.Close()
					return err
				}
				window[k] = d
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		n := 0
		for i, m := range msgs {
			if m == nil {
				continue
			}
			if d, ok := window[keys[i]]; ok && q.fifo {
				results[i].MessageID, results[i].SequenceNumber = d.id, tidemq.FormatSequenceNumber(uint64(d.seq))
				msgs[i] = nil
				dups++
				continue
			}
			if q.fifo {
				window[keys[i]] = sentAs{} // filled in below, once it has its seq
			}
			n++
		}
		if n == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT nextval('message_seq') FROM generate_series(1, $1)`, n)
		if err != nil {
			return err
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		k := 0
		for i, m := range msgs {
			if m == nil {
				if q.fifo && results[i].MessageID == "" && results[i].Err == nil {
					// A duplicate of an earlier entry of this request.
					d := window[keys[i]]
					results[i].MessageID, results[i].SequenceNumber = d.id, tidemq.FormatSequenceNumber(uint64(d.seq))
				}
				continue
			}
			m.seq = seqs[k]
			k++
			m.id = uuid.NewString()
			results[i].MessageID = m.id
			if q.fifo {
				results[i].SequenceNumber = tidemq.FormatSequenceNumber(uint64(m.seq))
				window[keys[i]] = sentAs{m.id, m.seq}
				batch.Queue(`INSERT INTO dedup (queue_id, key, message_id, seq, expires) VALUES ($1, $2, $3, $4, $5)
					ON CONFLICT (queue_id, key) DO UPDATE SET message_id = $3, seq = $4, expires = $5`,
					q.id, keys[i], m.id, m.seq, stampOf(now.Add(tidemq.DedupWindow)))
			}
			batch.Queue(insertSQL, m.insertArgs()...)
			sent++
		}
		batch.Queue(`SELECT pg_notify($1, $2)`, b.channel, q.name)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, err
	}
	b.stat(qid, func(s *tidemq.QueueStats) { s.Sent += sent; s.Duplicates += dups })
	if sent > 0 {
		b.waiters.wake(b.canonical(p.Queue))
	}
	return results, nil
}
