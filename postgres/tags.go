package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// TagQueue adds or overwrites tags; a queue holds at most
// tidemq.MaxTagsPerQueue.
func (b *Broker) TagQueue(ctx context.Context, p tidemq.TagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		return p.ApplyTo(q.name, q.tags)
	})
}

// UntagQueue removes tags; unknown keys are ignored.
func (b *Broker) UntagQueue(ctx context.Context, p tidemq.UntagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		p.ApplyTo(q.tags)
		return nil
	})
}

// ListQueueTags returns the queue's tags.
func (b *Broker) ListQueueTags(ctx context.Context, p tidemq.ListQueueTagsParams) (map[string]string, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	q, err := b.getQueue(ctx, b.pool, p.Queue, false)
	if err != nil {
		return nil, err
	}
	return q.tags, nil
}

// updateQueue runs fn on a queue with its row locked and saves the queue
// if fn succeeds.
func (b *Broker) updateQueue(ctx context.Context, name string, fn func(q *queue) error) error {
	return b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, name, true)
		if err != nil {
			return err
		}
		if err := fn(q); err != nil {
			return err
		}
		return q.save(ctx, tx)
	})
}

// AddPermission adds a statement, labelled p.Label, to the queue's Policy.
func (b *Broker) AddPermission(ctx context.Context, p tidemq.AddPermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		policy, err := p.AddTo(q.attrs[tidemq.AttrPolicy], q.arn)
		if err == nil {
			q.setPolicy(policy)
		}
		return err
	})
}

// RemovePermission removes the statement labelled p.Label.
func (b *Broker) RemovePermission(ctx context.Context, p tidemq.RemovePermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		policy, err := p.RemoveFrom(q.attrs[tidemq.AttrPolicy], q.arn)
		if err == nil {
			q.setPolicy(policy)
		}
		return err
	})
}

// setPolicy sets the queue's Policy attribute ("" removes it).
func (q *queue) setPolicy(policy string) {
	attrs := make(map[string]string, len(q.attrs))
	for k, v := range q.attrs {
		attrs[k] = v
	}
	attrs[tidemq.AttrPolicy] = policy
	q.applyAttributes(attrs)
}
