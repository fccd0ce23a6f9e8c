package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// A receipt handle names one receive of one message: the queue id, the
// message's sequence and the receive count at that receive (so a later
// receive makes older handles stale), sealed with an HMAC under the key in
// meta, which every node shares.
type receipt struct {
	qid, seq int64
	count    int
}

const receiptVersion = 2 // 1 is the engine's: the two never meet

func (r receipt) encode(key []byte) string {
	b := make([]byte, 0, 40)
	b = append(b, receiptVersion)
	b = binary.AppendUvarint(b, uint64(r.qid))
	b = binary.AppendUvarint(b, uint64(r.seq))
	b = binary.AppendUvarint(b, uint64(r.count))
	b = append(b, receiptMAC(key, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func receiptMAC(key, fields []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(fields)
	return h.Sum(nil)[:12]
}

func decodeReceipt(key []byte, s string) (receipt, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+3+12 || b[0] != receiptVersion {
		return receipt{}, false
	}
	fields := b[:len(b)-12]
	if !hmac.Equal(b[len(b)-12:], receiptMAC(key, fields)) {
		return receipt{}, false
	}
	b = b[1:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return receipt{}, false
		}
		vals[i] = v
		b = b[n:]
	}
	if len(b) != 12 || vals[2] == 0 || vals[2] > 1<<31 || vals[0] > 1<<62 || vals[1] > 1<<62 {
		return receipt{}, false
	}
	return receipt{qid: int64(vals[0]), seq: int64(vals[1]), count: int(vals[2])}, true
}

func invalidReceipt(handle string) error {
	return tidemq.InvalidReceiptHandle(handle)
}

func expiredReceipt(handle string) error {
	return tidemq.InvalidParameter("ReceiptHandle", handle, "The receipt handle has expired.")
}

// lookupReceipt resolves a handle for queue q and locks its message's row.
// It returns the message (nil when it is no longer in the queue) or
// ReceiptHandleIsInvalid for a handle that is malformed or belongs to
// another queue.
func (b *Broker) lookupReceipt(ctx context.Context, tx pgx.Tx, q *queue, handle string) (receipt, *message, error) {
	if handle == "" {
		return receipt{}, nil, tidemq.MissingParameter("ReceiptHandle")
	}
	r, ok := decodeReceipt(b.handleKey, handle)
	if !ok || r.qid != q.id {
		return r, nil, invalidReceipt(handle)
	}
	m, err := scanMessage(tx.QueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND seq = $2 FOR UPDATE`, q.id, r.seq))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, nil, nil
	}
	if err != nil {
		return r, nil, err
	}
	if r.count > m.receiveCount {
		return r, nil, invalidReceipt(handle)
	}
	return r, m, nil
}
