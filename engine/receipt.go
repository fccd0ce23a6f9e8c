package engine

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"

	"github.com/tidemq/tidemq"
)

// A receipt handle names one receive of one message: the queue id, the
// message's sequence, and the receive count at that receive (so a later
// receive makes older handles stale), sealed with an HMAC under the
// engine's secret key (stored under keyHandleSecret) so that a handle
// cannot be forged from the small integers it carries.
type receipt struct {
	qid, seq uint64
	count    int
}

const receiptVersion = 1

func (r receipt) encode(key []byte) string {
	b := make([]byte, 0, 40)
	b = append(b, receiptVersion)
	b = binary.AppendUvarint(b, r.qid)
	b = binary.AppendUvarint(b, r.seq)
	b = binary.AppendUvarint(b, uint64(r.count))
	b = appendReceiptMAC(b, key, b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// macState is a keyed HMAC kept for reuse: hmac.New costs two allocations
// and two SHA-256 blocks of key setup, on every receive and delete.
type macState struct {
	key []byte
	h   hash.Hash
	sum [sha256.Size]byte
}

var macStates sync.Pool

// appendReceiptMAC appends the 12-byte seal of a handle's fields to dst.
func appendReceiptMAC(dst, key, fields []byte) []byte {
	s, _ := macStates.Get().(*macState)
	if s == nil || !bytes.Equal(s.key, key) {
		s = &macState{key: key, h: hmac.New(sha256.New, key)}
	} else {
		s.h.Reset()
	}
	s.h.Write(fields)
	dst = append(dst, s.h.Sum(s.sum[:0])[:12]...)
	macStates.Put(s)
	return dst
}

func decodeReceipt(key []byte, s string) (receipt, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+3+12 || b[0] != receiptVersion {
		return receipt{}, false
	}
	fields := b[:len(b)-12]
	var mac [12]byte
	if !hmac.Equal(b[len(b)-12:], appendReceiptMAC(mac[:0], key, fields)) {
		return receipt{}, false
	}
	b = b[1:]
	var r receipt
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return receipt{}, false
		}
		vals[i] = v
		b = b[n:]
	}
	if len(b) != 12 || vals[2] == 0 || vals[2] > 1<<31 {
		return receipt{}, false
	}
	r.qid, r.seq, r.count = vals[0], vals[1], int(vals[2])
	return r, true
}

func invalidReceipt(handle string) error {
	return tidemq.InvalidReceiptHandle(handle)
}

func expiredReceipt(handle string) error {
	return tidemq.InvalidParameter("ReceiptHandle", handle, "The receipt handle has expired.")
}

// lookupReceipt resolves a handle for queue q. It returns the message (nil
// when it is no longer in the queue) or ReceiptHandleIsInvalid for a handle
// that is malformed or belongs to another queue.
func (q *queue) lookupReceipt(handle string) (receipt, *message, error) {
	if handle == "" {
		return receipt{}, nil, tidemq.MissingParameter("ReceiptHandle")
	}
	r, ok := decodeReceipt(q.handleKey, handle)
	if !ok || r.qid != q.id || r.seq >= q.nextSeq {
		return r, nil, invalidReceipt(handle)
	}
	m := q.msgs[r.seq]
	if m == nil {
		m = q.pageInOne(r.seq)
	}
	if m != nil && r.count > m.receiveCount {
		return r, nil, invalidReceipt(handle)
	}
	return r, m, nil
}
