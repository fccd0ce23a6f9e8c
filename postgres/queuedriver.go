package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// queueDriver is the broker's storage verbs for tidemq.QueueCore, which
// implements the calls that read or change only a queue's record (tags,
// permissions, GetQueueAttributes).
type queueDriver struct{ b *Broker }

// EditQueue runs edit on a queue with its row locked and saves the queue
// if edit succeeds.
func (d queueDriver) EditQueue(ctx context.Context, name string, edit func(*tidemq.QueueRecord) error) error {
	b := d.b
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, name, true)
		if err != nil {
			return err
		}
		r := tidemq.QueueRecord{Name: q.name, ARN: q.arn, Tags: q.tags, Attrs: q.attrs}
		if err := edit(&r); err != nil {
			return err
		}
		if r.AttrsChanged {
			q.applyAttributes(r.Attrs)
		}
		return q.save(ctx, tx)
	})
	if err == nil {
		b.queueChanged(name)
	}
	return err
}

// QueueTags returns the queue's tags.
func (d queueDriver) QueueTags(ctx context.Context, name string) (map[string]string, error) {
	if err := d.b.refusal(); err != nil {
		return nil, err
	}
	q, err := d.b.getQueue(ctx, d.b.pool, name, false)
	if err != nil {
		return nil, err
	}
	return q.tags, nil
}

// QueueView returns the queue's row and counters, after its retention is
// applied.
func (d queueDriver) QueueView(ctx context.Context, name string) (tidemq.QueueView, error) {
	b := d.b
	var v tidemq.QueueView
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, name, false)
		if err != nil {
			return err
		}
		now := b.clock.Now()
		if err := b.expire(ctx, tx, q, now); err != nil {
			return err
		}
		c, err := b.counts(ctx, tx, q.id, stampOf(now))
		if err != nil {
			return err
		}
		v = tidemq.QueueView{Attrs: q.attrs, ARN: q.arn, Created: timeOf(q.created), Modified: timeOf(q.modified),
			Visible: c.visible, Inflight: c.inflight, Delayed: c.delayed}
		return nil
	})
	return v, err
}
