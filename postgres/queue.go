package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// queue is a queue's row, with its attributes parsed.
type queue struct {
	id       int64
	name     string
	arn      string
	fifo     bool
	attrs    map[string]string
	tags     map[string]string
	created  int64
	modified int64
	purged   int64

	tidemq.QueueSettings
}

const queueCols = `id, name, fifo, attrs, tags, created, modified, purged`

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (b *Broker) scanQueue(row pgx.Row) (*queue, error) {
	q := &queue{}
	var attrs, tags []byte
	if err := row.Scan(&q.id, &q.name, &q.fifo, &attrs, &tags, &q.created, &q.modified, &q.purged); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, tidemq.NonExistentQueue()
		}
		return nil, err
	}
	var a map[string]string
	if err := json.Unmarshal(attrs, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(tags, &q.tags); err != nil {
		return nil, err
	}
	if q.tags == nil {
		q.tags = map[string]string{}
	}
	q.arn = b.arn(q.name)
	q.applyAttributes(a)
	return q, nil
}

// getQueue reads a queue by name (the home region may be written out);
// lock takes its row lock (FOR NO KEY
// UPDATE), which serialises the sends and receives of a FIFO queue and the
// changes of its settings, without blocking the inserts into the queue
// that only check it exists (FOR KEY SHARE, the foreign key's).
func (b *Broker) getQueue(ctx context.Context, db querier, name string, lock bool) (*queue, error) {
	sql := `SELECT ` + queueCols + ` FROM queues WHERE name = $1`
	if lock {
		sql += ` FOR NO KEY UPDATE`
	}
	return b.scanQueue(db.QueryRow(ctx, sql, b.canonical(name)))
}

// queueByARN reads a queue of this broker by ARN; nil when there is none.
func (b *Broker) queueByARN(ctx context.Context, db querier, arn string) (*queue, error) {
	name := b.nameOfARN(arn)
	if name == "" {
		return nil, nil
	}
	q, err := b.getQueue(ctx, db, name, false)
	if tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		return nil, nil
	}
	return q, err
}

// applyAttributes stores attrs (validated and merged with the defaults)
// and refreshes the parsed fields.
func (q *queue) applyAttributes(attrs map[string]string) {
	q.attrs = attrs
	q.QueueSettings = tidemq.ParseQueueSettings(attrs)
}

// cutoff is the enqueue time at or before which q's messages are past
// its retention at now: receives leave them out, the sweep deletes them.
func (q *queue) cutoff(now time.Time) int64 { return stampOf(now.Add(-q.Retention)) }

func (q *queue) dlqTarget() string {
	if q.Redrive == nil {
		return ""
	}
	return q.Redrive.DeadLetterTargetARN
}

func (q *queue) info() *tidemq.QueueInfo {
	return &tidemq.QueueInfo{Name: q.name, ARN: q.arn, FIFO: q.fifo}
}

// save writes the queue's attributes, tags and timestamps.
func (q *queue) save(ctx context.Context, tx pgx.Tx) error {
	attrs, _ := json.Marshal(q.attrs)
	tags, _ := json.Marshal(q.tags)
	_, err := tx.Exec(ctx, `UPDATE queues SET attrs = $2, tags = $3, modified = $4, purged = $5, dlq_target = $6 WHERE id = $1`,
		q.id, attrs, tags, q.modified, q.purged, q.dlqTarget())
	return err
}

// expiredDedupSQL deletes queue $1's deduplication keys expired at $2,
// but not those another transaction holds (SKIP LOCKED), which a later
// pass deletes if they are still expired then.
//
// Waiting for them could deadlock with a FIFO send. A send that takes
// over expired keys (fifoSendSQL's ON CONFLICT ... DO UPDATE, send.go)
// locks their rows one by one in the keys' order, and waits for a key
// whose row a delete holds; a plain DELETE locks the expired rows in the
// order it finds them (by expiry, through dedup_expires), and waits for a
// row a send holds. With keys a < b, b expired first: the send takes a,
// the delete takes b and waits for a, the send comes to b and waits for
// the delete. PostgreSQL broke the circle after deadlock_timeout (1 s) by
// failing one of them, which tried again (TestFIFOSendTakingOverExpired-
// KeysAndExpiryDoNotDeadlock). A key a send holds needs no delete: the
// send makes it live again, or finds it live and leaves it.
const expiredDedupSQL = `DELETE FROM dedup d USING (
		SELECT key FROM dedup WHERE queue_id = $1 AND expires <= $2 FOR UPDATE SKIP LOCKED) x
	WHERE d.queue_id = $1 AND d.key = x.key`

// expiredAttemptsSQL deletes queue $1's receive attempts expired at $2, as
// expiredDedupSQL its deduplication keys (a FIFO receive writes its
// attempt's row as a send its keys, ON CONFLICT ... DO UPDATE).
const expiredAttemptsSQL = `DELETE FROM receive_attempts d USING (
		SELECT attempt_id FROM receive_attempts WHERE queue_id = $1 AND expires <= $2 FOR UPDATE SKIP LOCKED) x
	WHERE d.queue_id = $1 AND d.attempt_id = x.attempt_id`

// expire drops the messages of q past its retention period (or captures
// them into the queue its capture tag names), and counts them, and on a
// FIFO queue forgets the deduplication entries and receive attempts whose
// five minutes are over. It costs an index probe each when nothing is due.
func (b *Broker) expire(ctx context.Context, tx pgx.Tx, q *queue, now time.Time) error {
	if q.fifo {
		// The deduplication window and receive attempts that ran out,
		// skipping the rows another transaction holds (expiredDedupSQL).
		if _, err := tx.Exec(ctx, expiredDedupSQL, q.id, stampOf(now)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, expiredAttemptsSQL, q.id, stampOf(now)); err != nil {
			return err
		}
	}
	cutoff := stampOf(now.Add(-q.Retention))
	if dst := b.captureTarget(ctx, tx, q); dst != nil {
		n, err := b.captureExpired(ctx, tx, q, dst, cutoff, now)
		if n > 0 {
			b.stat(q.id, func(s *tidemq.QueueStats) { s.Expired += uint64(n) })
		}
		return err
	}
	tag, err := tx.Exec(ctx, `DELETE FROM messages WHERE queue_id = $1 AND enqueued_at <= $2`, q.id, cutoff)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n > 0 {
		b.stat(q.id, func(s *tidemq.QueueStats) { s.Expired += uint64(n) })
		b.log.Warn("messages expired", "queue", q.name, "count", n, "reason", "retention period passed", "captured_into", "none: dropped")
	}
	return nil
}
