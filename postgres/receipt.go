package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// receiptVersion is PostgreSQL's receipt handle format
// (tidemq.ReceiptCodec; 1 is the engine's: the two never meet). The key
// is in meta, so every node shares it.
const receiptVersion = 2

// receipts is the broker's receipt codec.
func (b *Broker) receipts() tidemq.ReceiptCodec {
	return tidemq.ReceiptCodec{Version: receiptVersion, Key: b.handleKey}
}

// handle returns the receipt handle of m's latest receive in q.
func (b *Broker) handle(q *queue, m *message) string {
	return b.receipts().Encode(tidemq.Receipt{Queue: uint64(q.id), Seq: uint64(m.seq), Count: m.ReceiveCount})
}

// lookupReceipt resolves a handle for queue q and locks its message's row.
// It returns the message (nil when it is no longer in the queue) or
// ReceiptHandleIsInvalid for a handle that is malformed or belongs to
// another queue.
func (b *Broker) lookupReceipt(ctx context.Context, tx pgx.Tx, q *queue, handle string) (tidemq.Receipt, *message, error) {
	r, err := b.receipts().Open(handle, uint64(q.id))
	if err != nil {
		return r, nil, err
	}
	m, err := scanMessage(tx.QueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND seq = $2 FOR UPDATE`, q.id, int64(r.Seq)))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, nil, nil
	}
	if err != nil {
		return r, nil, err
	}
	if r.Count > m.ReceiveCount {
		return r, nil, tidemq.InvalidReceiptHandle(handle)
	}
	return r, m, nil
}

// handled describes m, named by receipt r, at now for the handle rules
// (tidemq.Handled); m is nil when it is no longer in q.
func (q *queue) handled(r tidemq.Receipt, m *message, now time.Time) tidemq.Handled {
	if m == nil {
		return tidemq.Handled{Gone: true, FIFO: q.fifo, Receipt: r}
	}
	n := stampOf(now)
	return tidemq.Handled{FIFO: q.fifo, Receipt: r, ReceiveCount: m.ReceiveCount,
		Inflight: m.inflight(n), Ready: m.ready(n), ReceivedAt: timeOf(m.ReceivedAt)}
}
