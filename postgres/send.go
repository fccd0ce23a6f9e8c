package postgres

import (
	"context"
	"slices"
	"time"

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
	res, err := b.sendFIFO(ctx, conn, q, p)
	return res, err
}

// sendStandard sends to a standard queue with the next group commit
// (commit.go): one statement for the group, its messages' instants the
// Clock's once the committer holds its connection.
func (b *Broker) sendStandard(ctx context.Context, q *queue, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	sender := p.Client.AccessKey
	if sender == "" {
		sender = b.acct
	}
	results := make([]tidemq.SendResult, len(p.Entries))
	var ids, bodies []string
	var attrs, sys [][]byte
	var delays []int64
	var groups []string
	for i := range p.Entries {
		entry := &p.Entries[i]
		res := &results[i]
		res.ID = entry.ID
		if err := entry.Validate(false, q.MaxSize); err != nil {
			res.Err = err
			continue
		}
		delay := q.Delay
		if entry.DelaySeconds != nil {
			delay = time.Duration(*entry.DelaySeconds) * time.Second
		}
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

// sendFIFO sends to a FIFO queue in one transaction on conn, q as read
// before it. The queue's row is locked for the transaction's length, so
// it takes three round trips while holding it: the lock, the
// deduplication window's look-up and the request's sequence numbers in one
// pipeline (each statement sees what was committed before it ran, so the
// look-up sees every send that held the lock before); then the window's
// and the messages' rows in one statement (insertFIFOSQL, so the depth
// counters' trigger runs once a request, not once a message); then the
// commit.
func (b *Broker) sendFIFO(ctx context.Context, conn *pgxpool.Conn, q0 *queue, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if err := p.ValidateFIFO(q0.ContentDedup); err != nil {
		return nil, err
	}
	var results []tidemq.SendResult
	var qid int64
	var sent, dups uint64
	err := b.inTxOn(ctx, conn, func(tx pgx.Tx) error {
		sent, dups = 0, 0
		now := b.clock.Now()
		sender := p.Client.AccessKey
		if sender == "" {
			sender = b.acct
		}
		// keys are the entries' deduplication keys under q's settings, ""
		// for an entry that q refuses.
		keys := func(q *queue) []string {
			ks := make([]string, len(p.Entries))
			for i := range p.Entries {
				e := &p.Entries[i]
				if e.Validate(true, q.MaxSize) == nil {
					ks[i] = q.DedupKey(e.MessageGroupID, tidemq.DeduplicationID(e.MessageDeduplicationID, e.Body))
				}
			}
			return ks
		}
		guess := keys(q0)
		var lookup []string
		for _, k := range guess {
			if k != "" {
				lookup = append(lookup, k)
			}
		}
		batch := &pgx.Batch{}
		batch.Queue(`SELECT `+queueCols+` FROM queues WHERE name = $1 FOR NO KEY UPDATE`, b.canonical(p.Queue))
		batch.Queue(dedupLookupSQL, q0.id, lookup, stampOf(now))
		batch.Queue(`SELECT nextval('message_seq') FROM generate_series(1, $1)`, len(lookup))
		br := tx.SendBatch(ctx, batch)
		q, err := b.scanQueue(br.QueryRow())
		if err != nil {
			br.Close()
			return err
		}
		window, err := readWindow(br)
		if err != nil {
			br.Close()
			return err
		}
		rows, err := br.Query()
		if err != nil {
			br.Close()
			return err
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		if !q.fifo {
			return tidemq.NonExistentQueue() // deleted and made again as a standard queue meanwhile
		}
		if err := p.ValidateFIFO(q.ContentDedup); err != nil {
			return err
		}
		qid = q.id
		ks := keys(q)
		if q.id != q0.id || !slices.Equal(ks, guess) {
			// The queue changed between the two reads: look again, and
			// take sequence numbers for what the lock found.
			lookup = lookup[:0]
			for _, k := range ks {
				if k != "" {
					lookup = append(lookup, k)
				}
			}
			rows, err := tx.Query(ctx, dedupLookupSQL, q.id, lookup, stampOf(now))
			if err != nil {
				return err
			}
			if window, err = collectWindow(rows); err != nil {
				return err
			}
			rows, err = tx.Query(ctx, `SELECT nextval('message_seq') FROM generate_series(1, $1)`, len(lookup))
			if err != nil {
				return err
			}
			if seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
				return err
			}
		}
		results = make([]tidemq.SendResult, len(p.Entries))
		var (
			dkeys, ids, bodies, groups, dedupIDs []string
			attrs, sys                           [][]byte
			mseqs                                []int64
		)
		k := 0
		for i := range p.Entries {
			entry := &p.Entries[i]
			res := &results[i]
			res.ID = entry.ID
			if ks[i] == "" {
				res.Err = entry.Validate(true, q.MaxSize)
				continue
			}
			if d, ok := window[ks[i]]; ok {
				// Sent within the window, or by an earlier entry of this
				// request.
				res.MessageID, res.SequenceNumber = d.id, tidemq.FormatSequenceNumber(uint64(d.seq))
				dups++
				continue
			}
			seq := seqs[k]
			k++
			res.MessageID = uuid.NewString()
			res.SequenceNumber = tidemq.FormatSequenceNumber(uint64(seq))
			window[ks[i]] = sentAs{res.MessageID, seq}
			dkeys, ids, mseqs = append(dkeys, ks[i]), append(ids, res.MessageID), append(mseqs, seq)
			bodies, groups = append(bodies, entry.Body), append(groups, entry.MessageGroupID)
			dedupIDs = append(dedupIDs, tidemq.DeduplicationID(entry.MessageDeduplicationID, entry.Body))
			attrs = append(attrs, jsonOrNil(entry.Attributes, len(entry.Attributes) == 0))
			sys = append(sys, jsonOrNil(entry.SystemAttributes, len(entry.SystemAttributes) == 0))
			sent++
		}
		if sent == 0 {
			return nil
		}
		batch = &pgx.Batch{}
		batch.Queue(insertFIFOSQL, q.id, stampOf(now.Add(tidemq.DedupWindow)), dkeys, ids, mseqs,
			sender, stampOf(now), stampOf(now.Add(q.Delay)), bodies, attrs, sys, groups, dedupIDs)
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

// sentAs is a message sent within the deduplication window.
type sentAs struct {
	id  string
	seq int64
}

// dedupLookupSQL reads the deduplication window's rows of the keys $2.
const dedupLookupSQL = `SELECT key, message_id, seq FROM dedup WHERE queue_id = $1 AND key = ANY($2) AND expires > $3`

// readWindow reads dedupLookupSQL's answer from a batch.
func readWindow(br pgx.BatchResults) (map[string]sentAs, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return collectWindow(rows)
}

func collectWindow(rows pgx.Rows) (map[string]sentAs, error) {
	window := map[string]sentAs{}
	defer rows.Close()
	for rows.Next() {
		var k string
		var d sentAs
		if err := rows.Scan(&k, &d.id, &d.seq); err != nil {
			return nil, err
		}
		window[k] = d
	}
	return window, rows.Err()
}

// insertFIFOSQL writes a FIFO send's messages and their deduplication
// window rows in one statement: $1 the queue, $2 the window's end, $3-$5
// each message's key, id and seq, $6 the sender, $7 the send's instant,
// $8 when they become receivable (the queue's delay), $9-$13 each
// message's body, attributes, system attributes, group and deduplication
// id.
const insertFIFOSQL = `WITH d AS (
		INSERT INTO dedup (queue_id, key, message_id, seq, expires)
		SELECT $1, k, id, s, $2 FROM unnest($3::text[], $4::text[], $5::bigint[]) AS d(k, id, s)
		ON CONFLICT (queue_id, key) DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, expires = excluded.expires)
	INSERT INTO messages (queue_id, seq, message_id, body, attrs, sys_attrs, group_id, dedup_id, sender, sent_at, enqueued_at, visible_at)
	SELECT $1, s, id, body, a, sa, g, dd, $6, $7, $7, $8
	FROM unnest($5::bigint[], $4::text[], $9::text[], $10::bytea[], $11::bytea[], $12::text[], $13::text[]) AS m(s, id, body, a, sa, g, dd)`
