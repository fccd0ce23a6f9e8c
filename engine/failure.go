package engine

import (
	"context"

	"github.com/tidemq/tidemq"
)

var _ tidemq.FailureRecorder = (*Engine)(nil)

// maxFailureHandles bounds one RecordFailure call: the largest batch a
// Lambda-style consumer can be handed.
const maxFailureHandles = 10000

// RecordFailure appends a consumer-failed event to the history of each
// message named by a receipt handle and persists the messages' state
// records in one batch, as a receive does. See tidemq.FailureRecorder.
//
// Only the latest receive's handle counts, on every queue type: a failure
// reported with an older handle belongs to a delivery that is over, and
// writing it now would put it after events it happened before.
func (e *Engine) RecordFailure(ctx context.Context, p tidemq.RecordFailureParams) (_ []error, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if len(p.ReceiptHandles) > maxFailureHandles {
		return nil, tidemq.TooManyReceiptHandles(len(p.ReceiptHandles))
	}
	q, now, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(p.ReceiptHandles))
	for i, h := range p.ReceiptHandles {
		r, m, err := q.lookupReceipt(h)
		switch {
		case err != nil:
			errs[i] = err
		case m == nil || m.state == stateGone:
			errs[i] = tidemq.MessageDoesNotExist(h)
		case !q.handled(r, m).Latest():
			errs[i] = tidemq.ExpiredReceiptHandle(h)
		default:
			m.AddHistory(tidemq.FailedEvent(q.name, p.Client, p.Detail, now))
			t.b.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
		}
	}
	return errs, e.finish(&h, t)
}
