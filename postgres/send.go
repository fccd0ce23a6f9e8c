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
// transaction that locks its messages' groups, so that their sequence
// numbers follow commit order, and claims their deduplication keys
// (sendFIFO).
func (b *Broker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q, err := b.messageQueue(ctx, p.Queue)
	if err != nil {
		return nil, err
	}
	if !q.fifo {
		res, err := b.sendStandard(ctx, q, p)
		if isForeignKeyViolation(err) {
			// The cached queue was deleted, and maybe created again:
			// look again.
			b.forgetQueue(q.name)
			if q, err = b.messageQueue(ctx, p.Queue); err != nil {
				return nil, err
			}
			if q.fifo {
				return nil, tidemq.NonExistentQueue()
			}
			res, err = b.sendStandard(ctx, q, p)
		}
		if isForeignKeyViolation(err) {
			return nil, tidemq.NonExistentQueue() // deleted since it was read
		}
		return res, b.failure(ctx, err)
	}
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return nil, b.failure(ctx, err)
	}
	defer conn.Release()
	return b.sendFIFO(ctx, conn, q, p)
}

// sendStandard sends to a standard queue with the next group commit
// (commit.go): one statement for the group, its messages' instants the
// Clock's once the committer holds its connection.
func (b *Broker) sendStandard(ctx context.Context, q *queue, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	results, rows := b.standardRows(q, &p)
	if rows == nil {
		return results, nil
	}
	req := &writeReq{send: rows}
	if err := b.submit(ctx, req); err != nil {
		return nil, err // a foreign key violation: the queue was deleted since it was read
	}
	if req.full != nil {
		return nil, req.full
	}
	b.sentStandard(q, rows)
	return results, nil
}

// standardRows gives p's messages to a standard queue q their ids, as the
// rows to write, and returns the results (the entries q refuses carry
// their error); rows is nil when there is nothing to write.
func (b *Broker) standardRows(q *queue, p *tidemq.SendMessagesParams) ([]tidemq.SendResult, *sendRows) {
	sender := p.SenderID(b.acct)
	results := p.Results(false, q.MaxSize)
	var ids, bodies []string
	var attrs, sys [][]byte
	var delays []int64
	var groups []string
	var sizes []int
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
		sizes = append(sizes, tidemq.MessageSize(entry.Body, entry.Attributes))
	}
	if len(ids) == 0 {
		return results, nil
	}
	return results, &sendRows{qid: q.id, sender: sender, ids: ids, bodies: bodies, attrs: attrs, sys: sys, delays: delays, groups: groups, sizes: sizes, notify: q.name}
}

// sentStandard counts rows as sent to q once they are committed, and wakes
// this node's polls of q (the group's commit announced it to the others).
func (b *Broker) sentStandard(q *queue, rows *sendRows) {
	b.stat(q.id, func(s *tidemq.QueueStats) { s.Sent += uint64(rows.written) })
	b.waiters.wake(q.name)
}

// sendFIFO sends to a FIFO queue on conn, q as read before, in one round
// trip: one pipeline, which PostgreSQL runs as one transaction, reads the
// queue's row, locks the groups of the messages (fifoSendLockSQL), runs
// fifoSendSQL, which sees every send that held those groups before it
// (each statement of a pipeline reads what was committed when it starts),
// and reads the answers (fifoSentSQL). So the groups' locks are held for
// the database's work alone, never across a round trip to this node. The
// messages are validated against q; if the queue's row shows it changed
// since (its attributes set, or deleted and made again), the statement
// wrote nothing and the send is done again on what was read. A leader's
// send is fenced in a transaction of its own (onConn).
func (b *Broker) sendFIFO(ctx context.Context, conn *pgxpool.Conn, q *queue, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	sender := p.SenderID(b.acct)
	for attempt := 0; ; attempt++ {
		if !q.fifo {
			return nil, tidemq.NonExistentQueue() // made again as a standard queue meanwhile
		}
		if err := p.ValidateFIFO(q.ContentDedup); err != nil {
			return nil, err
		}
		now := b.clock.Now()
		results := p.Results(true, q.MaxSize)
		// at[i] is entry i's key's place in keys (-1: refused); a later
		// entry with an earlier one's key gets its answer.
		first := map[string]int{}
		at := make([]int, len(p.Entries))
		dup := make([]bool, len(p.Entries))
		var keys, ids, bodies, groups, dedupIDs []string
		var attrs, sys [][]byte
		var sizes []int32
		for i := range p.Entries {
			entry := &p.Entries[i]
			at[i] = -1
			if results[i].Err != nil {
				continue
			}
			dedupID := tidemq.DeduplicationID(entry.MessageDeduplicationID, entry.Body)
			k := q.DedupKey(entry.MessageGroupID, dedupID)
			if n, ok := first[k]; ok {
				at[i], dup[i] = n, true
				continue
			}
			first[k], at[i] = len(keys), len(keys)
			keys, ids = append(keys, k), append(ids, uuid.NewString())
			bodies, groups, dedupIDs = append(bodies, entry.Body), append(groups, entry.MessageGroupID), append(dedupIDs, dedupID)
			attrs = append(attrs, jsonOrNil(entry.Attributes, len(entry.Attributes) == 0))
			sys = append(sys, jsonOrNil(entry.SystemAttributes, len(entry.SystemAttributes) == 0))
			sizes = append(sizes, int32(tidemq.MessageSize(entry.Body, entry.Attributes)))
		}
		if len(keys) == 0 {
			return results, nil
		}
		var locked *queue
		var applied bool
		var claimed, outIDs []string
		var outSeqs []int64
		var bytes int64
		err := b.lockedPipeline(ctx, conn, func(batch *pgx.Batch) {
			batch.Queue(`SELECT `+queueCols+` FROM queues WHERE name = $1`, b.canonical(p.Queue))
			batch.Queue(fifoSendLockSQL, q.id, groups)
			args := []any{q.id, q.modified, stampOf(now), stampOf(now.Add(tidemq.DedupWindow)), stampOf(now.Add(q.Delay)),
				sender, keys, ids, bodies, attrs, sys, groups, dedupIDs, sizes}
			if b.maxQueueBytes > 0 {
				batch.Queue(fifoSendLimitedSQL, append(args, b.maxQueueBytes)...)
			} else {
				batch.Queue(fifoSendSQL, args...)
			}
			batch.Queue(fifoSentSQL, q.id, keys)
		}, func(br pgx.BatchResults) error {
			var err error
			if locked, err = b.scanQueue(br.QueryRow()); err != nil {
				return err
			}
			if _, err := br.Exec(); err != nil {
				return err
			}
			if b.maxQueueBytes > 0 {
				if err := br.QueryRow().Scan(&applied, &claimed, &bytes); err != nil {
					return err
				}
			} else if err := br.QueryRow().Scan(&applied, &claimed); err != nil {
				return err
			}
			return br.QueryRow().Scan(&outIDs, &outSeqs)
		})
		if retryable(err) && attempt < 4 {
			continue
		}
		if err != nil {
			if isForeignKeyViolation(err) {
				return nil, tidemq.NonExistentQueue() // deleted since it was read
			}
			return nil, b.failure(ctx, err)
		}
		if !applied && b.maxQueueBytes > 0 && bytes >= b.maxQueueBytes {
			return nil, b.queueFull(q.name, bytes)
		}
		if !applied || locked.id != q.id || locked.modified != q.modified || len(outIDs) != len(keys) {
			if attempt >= 4 {
				return nil, tidemq.Errorf(tidemq.ErrInternalFailure, "The queue kept changing during the send; try again.")
			}
			q = locked
			continue
		}
		isNew := make(map[string]bool, len(claimed))
		for _, k := range claimed {
			isNew[k] = true
		}
		var sent, dups uint64
		for i := range results {
			res := &results[i]
			if res.Err != nil {
				continue
			}
			n := at[i]
			res.MessageID, res.SequenceNumber = outIDs[n], tidemq.FormatSequenceNumber(uint64(outSeqs[n]))
			if isNew[keys[n]] && !dup[i] {
				sent++
			} else {
				dups++
			}
		}
		b.stat(q.id, func(s *tidemq.QueueStats) { s.Sent += sent; s.Duplicates += dups })
		if sent > 0 {
			b.wake(q.name)
		}
		return results, nil
	}
}

// batcher is a connection or a transaction: what a pipeline runs on.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// A FIFO send takes the locks of its messages' groups (fifoSendLockSQL),
// the same advisory locks the receives take (fifoGroupKey, receive.go),
// waiting for them, in the order of their keys (so two sends never wait
// for each other in a circle), and holds them until its commit. Its
// messages take their sequence numbers (nextval) while it holds them, as
// a message moved into the group takes its own (move.go), so
// within a group sequence numbers follow commit order, and every snapshot
// sees a prefix of each group's messages: a receive never serves a
// message while an earlier one of its group is still to come. SQS asks no
// more: a SequenceNumber increases within its MessageGroupId. Sends to
// different groups of a queue do not wait for each other.
//
// The deduplication window stays exact without a lock of the whole queue
// (with DeduplicationScope queue one id spans the groups): the window's
// primary key (queue_id, key) decides. fifoSendSQL inserts a key unless a
// live row holds it, and takes over an expired one (ON CONFLICT ... DO
// UPDATE ... WHERE the row expired); a send that meets a key another
// send is inserting waits for that send's end, then finds the row live
// and leaves it. Only the keys it wrote (claimed) get messages, in the
// same statement. fifoSentSQL, the next statement (a new snapshot, after
// every send it waited for committed), reads each key's message from the
// window: the send's own, or the one it is a duplicate of. The keys are
// inserted in their order, so two sends never wait for each other's keys
// in a circle either.
const fifoSendLockSQL = `SELECT pg_advisory_xact_lock(` + fifoQueueKey + `, k)
	FROM (SELECT DISTINCT hashtext(g) AS k FROM unnest($2::text[]) AS g ORDER BY k) x`

// fifoSendSQL sends a FIFO request's messages in one statement, once the
// groups' locks are held: $1 the queue, $2 its modified as the request
// was validated against (a queue changed since gets nothing), $3 the
// send's instant, $4 the deduplication window's end, $5 when the messages
// become receivable (the queue's delay), $6 the sender, $7-$13 each
// message's deduplication key (distinct), id, body, attributes, system
// attributes, group and deduplication id, $14 each message's size
// (tidemq.MessageSize). A key sent within the window
// keeps the message it names; the others get sequence numbers in the
// request's order and are written with their window rows, those whose
// key it claimed (see above; so the depth counters' trigger runs once a
// request). The window is probed key by key, on its primary key (w: with
// key = ANY($7) AND expires > $3 a generic plan may scan every unexpired
// key of the queue instead). It returns whether the queue was as
// validated and the keys it claimed; the caller wakes the queue's polls
// after the commit when it claimed one.
const fifoSendSQL = `WITH e AS (` + fifoSendEntriesSQL + `),` + fifoSendRestSQL

// fifoSendEntriesSQL is the request's messages ($7-$14) as fifoSendSQL's
// first CTE, e, when the queue is as validated.
const fifoSendEntriesSQL = `
		SELECT * FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[], $11::bytea[], $12::text[], $13::text[], $14::integer[])
			WITH ORDINALITY AS e(k, id, body, a, sa, g, dd, sz, n)
		WHERE EXISTS (SELECT 1 FROM queues WHERE id = $1 AND modified = $2)`

// fifoSendLimitedSQL is fifoSendSQL with the check of --max-queue-bytes
// (queuebytes.go): a queue whose messages add up to $15 bytes or more
// gets nothing, and the statement returns, third, the bytes it held.
const fifoSendLimitedSQL = `WITH qb AS (SELECT coalesce(sum(bytes), 0)::bigint AS bytes FROM queue_depth WHERE queue_id = $1),
	e AS (` + fifoSendEntriesSQL + ` AND (SELECT bytes FROM qb) < $15),` +
	fifoSendRestSQL + `, (SELECT bytes FROM qb)`

// fifoSendRestSQL is fifoSendSQL after its first CTE.
const fifoSendRestSQL = `
	w AS (
		SELECT e.k AS key FROM e CROSS JOIN LATERAL (
			SELECT expires FROM dedup WHERE queue_id = $1 AND key = e.k LIMIT 1) d
		WHERE d.expires > $3),
	f AS MATERIALIZED (
		SELECT x.*, nextval('message_seq') AS seq FROM (
			SELECT * FROM e WHERE NOT EXISTS (SELECT 1 FROM w WHERE w.key = e.k) ORDER BY n OFFSET 0) x),
	d AS (
		INSERT INTO dedup AS o (queue_id, key, message_id, seq, expires) SELECT $1, k, id, seq, $4 FROM f ORDER BY k
		ON CONFLICT (queue_id, key) DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, expires = excluded.expires
			WHERE o.expires <= $3
		RETURNING key),
	m AS (
		INSERT INTO messages (queue_id, seq, message_id, body, attrs, sys_attrs, group_id, dedup_id, sender, sent_at, enqueued_at, visible_at, size)
		SELECT $1, seq, id, body, a, sa, g, dd, $6, $3, $3, $5, sz FROM f WHERE k IN (SELECT key FROM d) ORDER BY n)
	SELECT EXISTS (SELECT 1 FROM e), coalesce((SELECT array_agg(key) FROM d), '{}')`

// fifoSentSQL returns, in the request's order, each key's message id and
// sequence number, from the window (see above). Each key is one probe of
// the window's primary key, as in fifoSendSQL: written as a join, the
// generic plan that pgx's cached statement settles on while the window is
// small hashed the keys against every window row of the queue, a scan
// that grew with the window (2.9 ms a batch at 20,000 keys, more than the
// send itself).
const fifoSentSQL = `SELECT coalesce(array_agg(d.message_id ORDER BY e.n), '{}'), coalesce(array_agg(d.seq ORDER BY e.n), '{}')
	FROM unnest($2::text[]) WITH ORDINALITY AS e(k, n) CROSS JOIN LATERAL (
		SELECT message_id, seq FROM dedup WHERE queue_id = $1 AND key = e.k LIMIT 1) d`
