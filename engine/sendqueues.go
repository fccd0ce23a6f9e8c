package engine

import (
	"context"
	"slices"

	"github.com/tidemq/tidemq"
)

var _ tidemq.QueuesSender = (*Engine)(nil)

// SendToQueues sends to several queues in one batch of the store, all or
// nothing (see tidemq.QueuesSender). Everything is checked under e.mu
// before anything is added, so that a refusal leaves no message behind;
// the batch also carries what advancing the queues wrote, and is committed
// even when the send is refused (as SendMessages commits it).
func (e *Engine) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) (_ [][]tidemq.SendResult, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	for i := range ps {
		if err := ps[i].Validate(); err != nil {
			return nil, err
		}
	}
	if err := h.lock(); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	t := e.begin()
	queues := make([]*queue, len(ps))
	results := make([][]tidemq.SendResult, len(ps))
	refuse := func(err error) ([][]tidemq.SendResult, error) {
		_ = e.finish(&h, t) // commits what advance did
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		q, err := e.queue(p.Queue)
		if err != nil {
			return refuse(err)
		}
		seen := false
		for _, x := range queues[:i] {
			seen = seen || x == q
		}
		if !seen {
			e.advance(q, now, t)
		}
		if q.fifo {
			if err := p.ValidateFIFO(q.ContentDedup); err != nil {
				return refuse(err)
			}
		}
		results[i] = p.Results(q.fifo, q.MaxSize)
		for _, r := range results[i] {
			if r.Err != nil {
				return refuse(r.Err)
			}
		}
		queues[i] = q
	}
	// Every entry passed its checks; then --max-queue-bytes, once per
	// queue as for one request (PostgreSQL checks in the same order).
	for i, q := range queues {
		if slices.Index(queues, q) == i {
			if err := e.full(q, results[i]); err != nil {
				return refuse(err)
			}
		}
	}
	var waits []*sharedDurable
	for i, q := range queues {
		waits = append(waits, e.sendLocked(q, now, t, &ps[i], results[i])...)
	}
	if err := e.finish(&h, t); err != nil {
		return nil, err
	}
	if err := waitAll(waits); err != nil {
		return nil, err
	}
	return results, nil
}
