package postgres

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// Snapshot returns every queue's depth, age and counters, sorted by name.
// Expired messages are dropped first. The depths are the database's, so
// every node reports the same; the counters (Stats) and LastReceive are
// this node's since it started. The depths come from the depth counters
// and the receive indexes (countsSQL): the cost follows the number of
// queues and of messages in flight or delayed, not the backlog.
func (b *Broker) Snapshot() []tidemq.QueueSnapshot {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []tidemq.QueueSnapshot
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		out = nil
		now := b.clock.Now()
		qs, err := b.allQueues(ctx, tx)
		if err != nil {
			return err
		}
		if err := b.expireAll(ctx, tx, qs, now); err != nil {
			return err
		}
		dlqs := map[string]bool{}
		for _, q := range qs {
			if q.Redrive != nil {
				dlqs[q.Redrive.DeadLetterTargetARN] = true
			}
		}
		out, err = b.snapshotsOf(ctx, tx, qs, dlqs, now)
		return err
	})
	if err != nil {
		b.log.Warn("postgres: snapshot failed", "err", err)
		return nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SnapshotsAfter is tidemq.SnapshotPager: the first n queues whose names
// sort after after, in byte order, read in one statement through the
// queues_name_order index (migration 0012), their expired messages
// dropped and their depths counted as Snapshot does, without reading any
// other queue (GET /tidemq/queues at 100,000 queues).
func (b *Broker) SnapshotsAfter(after string, n int) ([]tidemq.QueueSnapshot, error) {
	if n <= 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []tidemq.QueueSnapshot
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		out = nil
		now := b.clock.Now()
		rows, err := tx.Query(ctx, snapshotPageSQL, after, n)
		if err != nil {
			return err
		}
		var qs []*queue
		for rows.Next() {
			q, err := b.scanQueue(rows)
			if err != nil {
				rows.Close()
				return err
			}
			qs = append(qs, q)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(qs) == 0 {
			return nil
		}
		if err := b.expireAll(ctx, tx, qs, now); err != nil {
			return err
		}
		// The page's queues that some queue's RedrivePolicy names, through
		// the dlq_target index.
		arns := make([]string, len(qs))
		for i, q := range qs {
			arns[i] = q.arn
		}
		rows, err = tx.Query(ctx, pageDeadLetterTargetsSQL, arns)
		if err != nil {
			return err
		}
		dlqs := map[string]bool{}
		for rows.Next() {
			var arn string
			if err := rows.Scan(&arn); err != nil {
				rows.Close()
				return err
			}
			dlqs[arn] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		out, err = b.snapshotsOf(ctx, tx, qs, dlqs, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pageDeadLetterTargetsSQL returns which of the ARNs $1 (a page's
// queues) some queue's RedrivePolicy names, through the queues_dlq_target
// index. That index is partial (only non-empty targets), and PostgreSQL
// proves = ANY($1) within its predicate only for a constant array of 100
// elements at most (a page of 101 or 1,000, or a generic plan, scanned
// every queue): the statement states the predicate itself.
const pageDeadLetterTargetsSQL = `SELECT DISTINCT dlq_target FROM queues WHERE dlq_target = ANY($1) AND dlq_target <> ''`

// snapshotPageSQL reads the n ($2) queues after the name $1, in byte
// order, through the queues_name_order index (COLLATE "C" on both the
// comparison and the order, as the index is made).
const snapshotPageSQL = `SELECT ` + queueCols + ` FROM queues WHERE name COLLATE "C" > $1
	ORDER BY name COLLATE "C" LIMIT $2`

// snapshotsOf snapshots qs, sorted by name; dlqs are the ARNs some
// queue's RedrivePolicy names.
func (b *Broker) snapshotsOf(ctx context.Context, tx pgx.Tx, qs []*queue, dlqs map[string]bool, now time.Time) ([]tidemq.QueueSnapshot, error) {
	ids := make([]int64, len(qs))
	for i, q := range qs {
		ids[i] = q.id
	}
	cs, oldest, err := b.countsOf(ctx, tx, ids, stampOf(now))
	if err != nil {
		return nil, err
	}
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	out := make([]tidemq.QueueSnapshot, 0, len(qs))
	for _, q := range qs {
		s := tidemq.QueueSnapshot{
			Name: q.name, ARN: q.arn, FIFO: q.fifo,
			RetentionSeconds:  int(q.Retention.Seconds()),
			IsDeadLetterQueue: dlqs[q.arn] || tidemq.NamedLikeDeadLetterQueue(q.name),
		}
		c := cs[q.id]
		s.Visible, s.InFlight, s.Delayed = c.visible, c.inflight, c.delayed
		s.Bytes, s.MaxBytes = c.bytes, b.maxQueueBytes
		s.IsDeadLetterQueue = s.IsDeadLetterQueue || c.deadLettered > 0
		if o := oldest[q.id]; o != nil {
			s.OldestAgeSeconds = now.Sub(timeOf(*o)).Seconds()
		}
		if q.Redrive != nil {
			s.DeadLetterTarget = q.Redrive.DeadLetterTargetARN
			s.MaxReceiveCount = q.Redrive.MaxReceiveCount
		}
		if st := b.stats[q.id]; st != nil {
			s.Stats = *st
		}
		if t, ok := b.lastReceive[q.id]; ok {
			s.LastReceiveUnixMilli = t.UnixMilli()
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// expireAll is expire for every queue at once, in three statements
// whatever the number of queues (one index probe per queue), except for
// the queues whose expired messages are captured, which expire one by one.
func (b *Broker) expireAll(ctx context.Context, tx pgx.Tx, qs []*queue, now time.Time) error {
	var ids, cutoffs []int64
	for _, q := range qs {
		if q.tags[CaptureExpiredTag] != "" {
			if err := b.expire(ctx, tx, q, now); err != nil {
				return err
			}
			continue
		}
		ids = append(ids, q.id)
		cutoffs = append(cutoffs, stampOf(now.Add(-q.Retention)))
	}
	// The keys and attempts other transactions hold are skipped, as
	// expire skips them (expiredDedupSQL, queue.go).
	n := stampOf(now)
	if _, err := tx.Exec(ctx, `DELETE FROM dedup d USING (
			SELECT queue_id, key FROM dedup WHERE expires <= $1 FOR UPDATE SKIP LOCKED) x
		WHERE d.queue_id = x.queue_id AND d.key = x.key`, n); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM receive_attempts d USING (
			SELECT queue_id, attempt_id FROM receive_attempts WHERE expires <= $1 FOR UPDATE SKIP LOCKED) x
		WHERE d.queue_id = x.queue_id AND d.attempt_id = x.attempt_id`, n); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	// The expired rows are found through the age index, queue by queue
	// (the LIMIT keeps the planner from flattening the lateral subquery
	// into a hash join over a scan of the whole table: over a second at
	// a million messages), at most expireBatch a queue per pass, and
	// deleted by key.
	rows, err := tx.Query(ctx, `WITH gone AS (
			DELETE FROM messages d USING (
				SELECT m.queue_id, m.seq FROM unnest($1::bigint[], $2::bigint[]) AS c(id, cutoff)
				CROSS JOIN LATERAL (SELECT queue_id, seq FROM messages WHERE queue_id = c.id AND enqueued_at <= c.cutoff
					ORDER BY enqueued_at LIMIT `+strconv.Itoa(expireBatch)+`) m) x
			WHERE d.queue_id = x.queue_id AND d.seq = x.seq
			RETURNING d.queue_id)
		SELECT queue_id, count(*) FROM gone GROUP BY queue_id`, ids, cutoffs)
	if err != nil {
		return err
	}
	defer rows.Close()
	names := map[int64]string{}
	for _, q := range qs {
		names[q.id] = q.name
	}
	for rows.Next() {
		var id, count int64
		if err := rows.Scan(&id, &count); err != nil {
			return err
		}
		b.stat(id, func(s *tidemq.QueueStats) { s.Expired += uint64(count) })
		b.log.Warn("messages expired", "queue", names[id], "count", count, "reason", "retention period passed", "captured_into", "none: dropped")
	}
	return rows.Err()
}

// expireBatch bounds how many expired messages of one queue a pass of
// expireAll deletes: the sweep's transaction stays short, and the next
// pass (10 s later) takes the rest.
const expireBatch = 100000

// allQueues reads every queue.
func (b *Broker) allQueues(ctx context.Context, tx pgx.Tx) ([]*queue, error) {
	rows, err := tx.Query(ctx, `SELECT `+queueCols+` FROM queues`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var qs []*queue
	for rows.Next() {
		q, err := b.scanQueue(rows)
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, rows.Err()
}

// QueueCount is the number of queues in the database
// (tidemq.QueueCounter): one count of the queues table, no snapshot.
func (b *Broker) QueueCount() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM queues`).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// visitPage is how many queues Visit reads per statement (a variable
// for the tests).
var visitPage = 1000

// Visit calls f with every queue's snapshot, a page of visitPage queues
// at a time in name order, each page read as SnapshotsAfter reads it
// (tidemq.Visitor): the console's overview and the alarms hold one page,
// not a snapshot of every queue. Pages are separate transactions: a
// queue created or deleted during the visit may be seen or not. It
// returns false when a page cannot be read, after f has seen the pages
// before it.
func (b *Broker) Visit(f func(*tidemq.QueueSnapshot)) bool {
	after := ""
	for {
		page, err := b.SnapshotsAfter(after, visitPage)
		if err != nil {
			b.log.Warn("postgres: visit of the queues failed", "after", after, "err", err)
			return false
		}
		for i := range page {
			f(&page[i])
		}
		if len(page) < visitPage {
			return true
		}
		after = page[len(page)-1].Name
	}
}
