package engine

import (
	"context"
	"time"

	"github.com/tidemq/tidemq"
)

// ChangeMessageVisibility changes the visibility timeout of received
// messages, counted from now. See tidemq.Broker.
func (e *Engine) ChangeMessageVisibility(ctx context.Context, p tidemq.ChangeVisibilityParams) (_ []error, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q, now, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(p.Entries))
	for i := range p.Entries {
		errs[i] = e.changeVisibility(q, &p.Entries[i], now, t)
	}
	return errs, e.finish(&h, t)
}

func (e *Engine) changeVisibility(q *queue, entry *tidemq.ChangeVisibilityEntry, now time.Time, t *txn) error {
	if err := entry.Validate(); err != nil {
		return err
	}
	r, m, err := q.lookupReceipt(entry.ReceiptHandle)
	if err != nil {
		return err
	}
	c, err := entry.Decide(q.handled(r, m), now)
	if err != nil {
		return err
	}
	m.VisibleAt = stampOf(c.VisibleAt)
	if !c.Write {
		return nil
	}
	if c.Release {
		m.AddHistory(tidemq.ReleasedEvent(q.name, now))
		q.setState(m, stateReady)
	} else {
		q.setState(m, stateInflight) // a new deadline; the old timer entry goes stale
	}
	t.b.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
	return nil
}
