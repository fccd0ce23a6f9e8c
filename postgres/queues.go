package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// CreateQueue creates a queue, or returns the existing one when every given
// attribute matches it.
func (b *Broker) CreateQueue(ctx context.Context, p tidemq.CreateQueueParams) (*tidemq.QueueInfo, error) {
	fifo, attrs, err := p.Validate()
	if err != nil {
		return nil, err
	}
	p.Name = b.canonical(p.Name)
	var info *tidemq.QueueInfo
	err = b.inTx(ctx, func(tx pgx.Tx) error {
		existing, err := b.getQueue(ctx, tx, p.Name, false)
		if err == nil {
			if err := tidemq.CheckExisting(attrs, fifo, existing.attrs, existing.fifo); err != nil {
				return err
			}
			info = existing.info()
			return nil
		}
		if !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
			return err
		}
		merged := tidemq.MergeQueueAttributes(tidemq.DefaultQueueAttributes(fifo), attrs)
		if err := b.checkRedrive(ctx, tx, p.Name, fifo, merged); err != nil {
			return err
		}
		q := &queue{name: p.Name, arn: b.arn(p.Name), fifo: fifo, tags: map[string]string{}}
		q.applyAttributes(merged)
		for k, v := range p.Tags {
			q.tags[k] = v
		}
		now := stampOf(b.clock.Now())
		ab, _ := json.Marshal(q.attrs)
		tb, _ := json.Marshal(q.tags)
		// A concurrent create of the same name: the loser retries and
		// finds the winner's queue.
		var id int64
		err = tx.QueryRow(ctx, `INSERT INTO queues (name, fifo, attrs, tags, created, modified, dlq_target)
			VALUES ($1, $2, $3, $4, $5, $5, $6) ON CONFLICT (name) DO NOTHING RETURNING id`,
			q.name, fifo, ab, tb, now, q.dlqTarget()).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return errRetry
		}
		info = q.info()
		return err
	})
	if errors.Is(err, errRetry) {
		return b.CreateQueue(ctx, p)
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}

var errRetry = errors.New("postgres: concurrent change, retry")

// checkRedrive validates a RedrivePolicy against the other queues: the
// target exists, has the same type, and its RedriveAllowPolicy lets this
// queue in.
func (b *Broker) checkRedrive(ctx context.Context, db querier, name string, fifo bool, attrs map[string]string) error {
	return tidemq.CheckRedrive(attrs, b.region, name, b.arn(name), fifo, func(arn string) (*tidemq.RedriveTarget, error) {
		dlq, err := b.queueByARN(ctx, db, arn)
		if dlq == nil || err != nil {
			return nil, err
		}
		return &tidemq.RedriveTarget{Name: dlq.name, ARN: dlq.arn, FIFO: dlq.fifo, Allow: dlq.Allow}, nil
	})
}

// GetQueue reports a queue by name.
func (b *Broker) GetQueue(ctx context.Context, p tidemq.GetQueueParams) (*tidemq.QueueInfo, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := b.refusal(); err != nil {
		return nil, err
	}
	q, err := b.getQueue(ctx, b.pool, p.Name, false)
	if err != nil {
		return nil, err
	}
	return q.info(), nil
}

// DeleteQueue deletes a queue and all its messages at once.
func (b *Broker) DeleteQueue(ctx context.Context, p tidemq.DeleteQueueParams) error {
	p.Queue = b.canonical(p.Queue)
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM queues WHERE name = $1`, p.Queue)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return tidemq.NonExistentQueue()
		}
		return nil
	})
	if err == nil {
		b.queueChanged(p.Queue)
		b.wake(p.Queue) // each sees the queue is gone
	}
	return err
}

// PurgeQueue deletes every message, in flight or not, and the deduplication
// window of a FIFO queue; once per 60 seconds.
func (b *Broker) PurgeQueue(ctx context.Context, p tidemq.PurgeQueueParams) error {
	return b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, true)
		if err != nil {
			return err
		}
		now := b.clock.Now()
		if q.purged != 0 && now.Sub(timeOf(q.purged)) < tidemq.PurgeCooldown {
			return tidemq.PurgeInProgress(q.name)
		}
		tag, err := tx.Exec(ctx, `DELETE FROM messages WHERE queue_id = $1`, q.id)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM receive_attempts WHERE queue_id = $1`, q.id); err != nil {
			return err
		}
		// A purge also forgets the deduplication window: a message sent
		// again with the id of a purged one is accepted, as on SQS.
		if _, err := tx.Exec(ctx, `DELETE FROM dedup WHERE queue_id = $1`, q.id); err != nil {
			return err
		}
		n := tag.RowsAffected()
		b.stat(q.id, func(s *tidemq.QueueStats) { s.Purged += uint64(n) })
		q.purged = stampOf(now)
		return q.save(ctx, tx)
	})
}

// ListQueues lists queue names in order, optionally by prefix, in pages:
// one region's, the region the prefix names ("eu-west-1/ord") or else the
// broker's own.
func (b *Broker) ListQueues(ctx context.Context, p tidemq.ListQueuesParams) (*tidemq.ListQueuesResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := b.refusal(); err != nil {
		return nil, err
	}
	region, account, prefix := tidemq.SplitQualifiedName(p.Prefix, b.region, b.acct)
	sql := `SELECT name FROM queues WHERE starts_with(name, $1)`
	if region == b.region {
		sql += ` AND strpos(name, '/') = 0` // the home region's names are plain
	}
	if account == b.acct {
		sql += ` AND strpos(name, ':') = 0` // and so are the home account's
	}
	names, err := b.names(ctx, sql, tidemq.QualifiedQueueName(region, b.region, account, b.acct, prefix))
	if err != nil {
		return nil, err
	}
	return tidemq.PageQueueNames(names, p.MaxResults, p.NextToken)
}

// ListDeadLetterSourceQueues lists the queues whose RedrivePolicy targets
// the named queue.
func (b *Broker) ListDeadLetterSourceQueues(ctx context.Context, p tidemq.ListDeadLetterSourceQueuesParams) (*tidemq.ListQueuesResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := b.refusal(); err != nil {
		return nil, err
	}
	dlq, err := b.getQueue(ctx, b.pool, p.Queue, false)
	if err != nil {
		return nil, err
	}
	names, err := b.names(ctx, `SELECT name FROM queues WHERE dlq_target = $1`, dlq.arn)
	if err != nil {
		return nil, err
	}
	return tidemq.PageQueueNames(names, p.MaxResults, p.NextToken)
}

func (b *Broker) names(ctx context.Context, sql string, arg string) ([]string, error) {
	rows, err := b.pool.Query(ctx, sql, arg)
	if err == nil {
		var names []string
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return names, err
	}
	return nil, err
}

// counts are a queue's ApproximateNumberOf* counters at now.
type counts struct {
	visible, inflight, delayed, deadLettered int
	// bytes is the size of the queue's messages (migrations/0013_queue_bytes.sql).
	bytes int64
}

// countsSQL reads the counters of the queues $1 at $2
// (migrations/0007_queue_depth.sql): the messages and dead letters from
// queue_depth, in flight and delayed from the receive indexes (what is
// still ahead of $2), visible the rest. Its cost follows the number of
// queues and of messages in flight or delayed, not the backlog.
const countsSQL = `SELECT q.id, coalesce(d.messages, 0), coalesce(d.dead_lettered, 0), coalesce(d.bytes, 0),
		(SELECT count(*) FROM messages WHERE queue_id = q.id AND receive_count > 0 AND visible_at > $2),
		(SELECT count(*) FROM messages WHERE queue_id = q.id AND receive_count = 0 AND visible_at > $2),
		(SELECT min(enqueued_at) FROM messages WHERE queue_id = q.id)
	FROM unnest($1::bigint[]) AS q(id)
	LEFT JOIN (SELECT queue_id, sum(messages)::bigint AS messages, sum(dead_lettered)::bigint AS dead_lettered,
			sum(bytes)::bigint AS bytes
		FROM queue_depth WHERE queue_id = ANY($1) GROUP BY queue_id) d ON d.queue_id = q.id`

// countsOf returns the counters of the queues ids at now, and the enqueue
// time of each one's oldest message (nil when it is empty).
func (b *Broker) countsOf(ctx context.Context, db querier, ids []int64, now int64) (map[int64]counts, map[int64]*int64, error) {
	rows, err := db.Query(ctx, countsSQL, ids, now)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	out := map[int64]counts{}
	oldest := map[int64]*int64{}
	for rows.Next() {
		var id, total, dead, bytes, inflight, delayed int64
		var old *int64
		if err := rows.Scan(&id, &total, &dead, &bytes, &inflight, &delayed, &old); err != nil {
			return nil, nil, err
		}
		out[id] = counts{visible: int(max(total-inflight-delayed, 0)), inflight: int(inflight), delayed: int(delayed),
			deadLettered: int(dead), bytes: bytes}
		oldest[id] = old
	}
	return out, oldest, rows.Err()
}

func (b *Broker) counts(ctx context.Context, db querier, qid int64, now int64) (counts, error) {
	c, _, err := b.countsOf(ctx, db, []int64{qid}, now)
	return c[qid], err
}

// SetQueueAttributes changes settable attributes. Changes apply at once.
func (b *Broker) SetQueueAttributes(ctx context.Context, p tidemq.SetQueueAttributesParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	var name string
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, p.Queue, true)
		if err != nil {
			return err
		}
		name = q.name
		merged, err := p.Merge(q.attrs, q.fifo, func(merged map[string]string) error {
			return b.checkRedrive(ctx, tx, q.name, q.fifo, merged)
		})
		if err != nil {
			return err
		}
		q.applyAttributes(merged)
		q.modified = stampOf(b.clock.Now())
		return q.save(ctx, tx)
	})
	if err == nil {
		b.queueChanged(name)
		b.wake(name) // a shorter delay or a new wait time may concern waiting polls
	}
	return err
}
