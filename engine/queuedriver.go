package engine

import (
	"context"

	"github.com/tidemq/tidemq"
)

// queueDriver is the engine's storage verbs for tidemq.QueueCore, which
// implements the calls that read or change only a queue's record (tags,
// permissions, GetQueueAttributes).
type queueDriver struct{ e *Engine }

// EditQueue runs edit on a queue under the lock and stores the queue
// record if edit succeeds.
func (d queueDriver) EditQueue(ctx context.Context, name string, edit func(*tidemq.QueueRecord) error) (err error) {
	e := d.e
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return err
	}
	q, err := e.queue(name)
	if err == nil {
		if q.tags == nil {
			q.tags = make(map[string]string) // the edit may tag in place
		}
		r := tidemq.QueueRecord{Name: q.name, ARN: q.arn(), Tags: q.tags, Attrs: q.attrs}
		if err = edit(&r); err == nil && r.AttrsChanged {
			q.applyAttributes(r.Attrs)
		}
	}
	if err != nil {
		h.unlock()
		return err
	}
	t := e.begin()
	t.b.Set(queueKey(q.name), q.record())
	return e.finish(&h, t)
}

// QueueTags returns a copy of the queue's tags.
func (d queueDriver) QueueTags(ctx context.Context, name string) (_ map[string]string, err error) {
	h := hold{e: d.e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return nil, err
	}
	// e.mu is released by the guard
	q, err := d.e.queue(name)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(q.tags))
	for k, v := range q.tags {
		out[k] = v
	}
	return out, nil
}

// QueueView returns the queue's record and counters, after applying what
// is due (lockQueue). q.attrs is never changed in place (applyAttributes
// replaces it), so the view may hold it past the lock.
func (d queueDriver) QueueView(ctx context.Context, name string) (_ tidemq.QueueView, err error) {
	e := d.e
	h := hold{e: e}
	defer h.guard(&err)
	q, _, t, err := e.lockQueue(&h, name)
	if err != nil {
		return tidemq.QueueView{}, err
	}
	v := tidemq.QueueView{Attrs: q.attrs, ARN: q.arn(), Created: q.created.Time(), Modified: q.modified.Time(),
		Visible: q.nReady, Inflight: q.nInflight, Delayed: q.nDelayed}
	return v, e.finish(&h, t)
}
