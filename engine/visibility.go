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
	v := 0 // a batch entry without a timeout
	if entry.VisibilityTimeout != nil {
		v = *entry.VisibilityTimeout
	}
	r, m, err := q.lookupReceipt(entry.ReceiptHandle)
	if err != nil {
		return err
	}
	if m == nil {
		return tidemq.InvalidParameter("ReceiptHandle", entry.ReceiptHandle, "Message does not exist or is not available for visibility timeout change.")
	}
	if q.fifo && (r.count != m.receiveCount || m.state != stateInflight) {
		return expiredReceipt(entry.ReceiptHandle)
	}
	if m.state != stateInflight && m.state != stateReady {
		return tidemq.MsgNotInflight.New()
	}
	// On a standard queue SQS accepts an expired handle: the message,
	// visible again, is hidden for the new timeout (0 changes nothing).
	timeout := time.Duration(v) * time.Second
	if now.Add(timeout).After(m.receivedAt.time().Add(tidemq.MaxVisibilityTimeout * time.Second)) {
		return tidemq.InvalidParameter("VisibilityTimeout", v, "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]")
	}
	m.visibleAt = stampOf(now.Add(timeout))
	if v == 0 && m.state == stateReady {
		return nil
	}
	if v == 0 {
		m.addHistory(tidemq.HistoryEvent{Time: now, Kind: tidemq.HistoryReleased, Queue: q.name,
			Detail: "visibility timeout set to 0: returned to the queue"})
		q.setState(m, stateReady)
	} else {
		q.setState(m, stateInflight) // a new deadline; the old timer entry goes stale
	}
	t.b.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
	return nil
}
