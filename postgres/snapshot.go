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
		ids := make([]int64, len(qs))
		for i, q := range qs {
			ids[i] = q.id
		}
		cs, oldest, err := b.countsOf(ctx, tx, ids, stampOf(now))
		if err != nil {
			return err
		}
		b.statsMu.Lock()
		defer b.statsMu.Unlock()
		for _, q := range qs {
			s := tidemq.QueueSnapshot{
				Name: q.name, ARN: q.arn, FIFO: q.fifo,
				RetentionSeconds:  int(q.Retention.Seconds()),
				IsDeadLetterQueue: dlqs[q.arn] || tidemq.NamedLikeDeadLetterQueue(q.name),
			}
			c := cs[q.id]
			s.Visible, s.InFlight, s.Delayed = c.visible, c.inflight, c.delayed
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
		return nil
	})
	if err != nil {
		b.log.Warn("postgres: snapshot failed", "err", err)
		return nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
