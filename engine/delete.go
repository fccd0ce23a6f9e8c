package engine

import (
	"context"

	"github.com/tidemq/tidemq"
)

// DeleteMessages deletes messages by receipt handle. See tidemq.Broker.
//
// On a standard queue any handle the message was ever given deletes it,
// even after its visibility timeout or while another consumer holds it; a
// handle for a message already gone succeeds too. On a FIFO queue only the
// latest handle works, and only while the message is in flight.
func (e *Engine) DeleteMessages(ctx context.Context, p tidemq.DeleteMessagesParams) (_ []error, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q, _, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(p.Entries))
	for i, entry := range p.Entries {
		r, m, err := q.lookupReceipt(entry.ReceiptHandle)
		switch {
		case err != nil:
			errs[i] = err
		case m == nil:
			// Already deleted: success, as on SQS.
		case q.handled(r, m).Stale():
			errs[i] = tidemq.ExpiredReceiptHandle(entry.ReceiptHandle)
		default:
			q.remove(m, t)
			q.count().Deleted++
		}
	}
	return errs, e.finish(&h, t)
}
