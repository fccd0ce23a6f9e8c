package engine

import (
	"github.com/tidemq/tidemq"
)

// receiptVersion is the embedded store's receipt handle format
// (tidemq.ReceiptCodec); the key is the engine's secret, stored under
// keyHandleSecret.
const receiptVersion = 1

// receipts is q's receipt codec.
func (q *queue) receipts() tidemq.ReceiptCodec {
	return tidemq.ReceiptCodec{Version: receiptVersion, Key: q.e.handleKey}
}

// handle returns the receipt handle of m's latest receive.
func (q *queue) handle(m *message) string {
	return q.receipts().Encode(tidemq.Receipt{Queue: q.id, Seq: m.seq, Count: m.ReceiveCount})
}

// lookupReceipt resolves a handle for queue q. It returns the message (nil
// when it is no longer in the queue) or ReceiptHandleIsInvalid for a handle
// that is malformed or belongs to another queue.
func (q *queue) lookupReceipt(handle string) (tidemq.Receipt, *message, error) {
	r, err := q.receipts().Open(handle, q.id)
	if err != nil {
		return r, nil, err
	}
	if r.Seq >= q.nextSeq {
		return r, nil, tidemq.InvalidReceiptHandle(handle)
	}
	m := q.msgs[r.Seq]
	if m == nil && q.fifo {
		m = q.pageInGroupOne(r.Seq)
	} else if m == nil {
		m = q.pageInOne(r.Seq)
	}
	if m != nil && r.Count > m.ReceiveCount {
		return r, nil, tidemq.InvalidReceiptHandle(handle)
	}
	return r, m, nil
}

// handled describes m, named by receipt r, for the handle rules
// (tidemq.Handled); m is nil when it is no longer in q.
func (q *queue) handled(r tidemq.Receipt, m *message) tidemq.Handled {
	if m == nil {
		return tidemq.Handled{Gone: true, FIFO: q.fifo, Receipt: r}
	}
	return tidemq.Handled{FIFO: q.fifo, Receipt: r, ReceiveCount: m.ReceiveCount,
		Inflight: m.state == stateInflight, Ready: m.state == stateReady, ReceivedAt: m.ReceivedAt.Time()}
}
