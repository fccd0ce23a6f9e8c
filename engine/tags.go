package engine

import (
	"context"

	"github.com/tidemq/tidemq"
)

// TagQueue adds or overwrites tags; a queue holds at most
// tidemq.MaxTagsPerQueue.
func (e *Engine) TagQueue(ctx context.Context, p tidemq.TagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		return p.ApplyTo(q.name, q.tags)
	})
}

// UntagQueue removes tags; unknown keys are ignored.
func (e *Engine) UntagQueue(ctx context.Context, p tidemq.UntagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		p.ApplyTo(q.tags)
		return nil
	})
}

// ListQueueTags returns a copy of the queue's tags.
func (e *Engine) ListQueueTags(ctx context.Context, p tidemq.ListQueueTagsParams) (_ map[string]string, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return nil, err
	}
	// e.mu is released by the guard
	q, err := e.queue(p.Queue)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(q.tags))
	for k, v := range q.tags {
		out[k] = v
	}
	return out, nil
}

// updateQueue runs fn on a queue under the lock and stores the queue record
// if fn succeeds.
func (e *Engine) updateQueue(name string, fn func(q *queue) error) (err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return err
	}
	q, err := e.queue(name)
	if err == nil {
		err = fn(q)
	}
	if err != nil {
		h.unlock()
		return err
	}
	t := e.begin()
	t.b.Set(queueKey(q.name), q.record())
	return e.finish(&h, t)
}

// AddPermission adds a statement, labelled p.Label, to the queue's Policy.
func (e *Engine) AddPermission(ctx context.Context, p tidemq.AddPermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		policy, err := p.AddTo(q.attrs[tidemq.AttrPolicy], q.arn)
		if err == nil {
			q.setPolicy(policy)
		}
		return err
	})
}

// RemovePermission removes the statement labelled p.Label.
func (e *Engine) RemovePermission(ctx context.Context, p tidemq.RemovePermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
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
