package tidemq

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"
)

// A Receipt is what a receipt handle names: one receive of one message.
// Queue and Seq are the store's numbers for the queue and the message;
// Count is the message's receive count at that receive, so that a later
// receive makes older handles stale (on FIFO queues, and for failures).
type Receipt struct {
	Queue, Seq uint64
	Count      int
}

// ReceiptCodec seals receipts into handles and opens them again. A handle
// is Version, the three numbers as uvarints and the first 12 bytes of an
// HMAC-SHA256 of them under Key, in unpadded URL-safe base64: the MAC is
// what keeps a client from forging a handle out of small integers.
//
// Each store has its own Version (1 embedded, 2 PostgreSQL) and its own
// Key (kept in the store, so that handles outlive a restart and, on
// PostgreSQL, work on every node); a handle of one store is invalid on
// the other.
type ReceiptCodec struct {
	Version byte
	Key     []byte
}

// receiptMACLen is how much of the HMAC a handle carries.
const receiptMACLen = 12

// maxReceiptNumber bounds Queue and Seq in a handle: both stores number
// below it, and PostgreSQL's bigint holds it.
const maxReceiptNumber = 1 << 62

// Encode returns r's handle.
func (c ReceiptCodec) Encode(r Receipt) string {
	b := make([]byte, 0, 40)
	b = append(b, c.Version)
	b = binary.AppendUvarint(b, r.Queue)
	b = binary.AppendUvarint(b, r.Seq)
	b = binary.AppendUvarint(b, uint64(r.Count))
	b = appendReceiptMAC(b, c.Key, b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the receipt a handle names, and false for a handle that
// is malformed, of another version, or not sealed under c.Key.
func (c ReceiptCodec) Decode(s string) (Receipt, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+3+receiptMACLen || b[0] != c.Version {
		return Receipt{}, false
	}
	fields := b[:len(b)-receiptMACLen]
	var mac [receiptMACLen]byte
	if !hmac.Equal(b[len(b)-receiptMACLen:], appendReceiptMAC(mac[:0], c.Key, fields)) {
		return Receipt{}, false
	}
	b = b[1:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return Receipt{}, false
		}
		vals[i] = v
		b = b[n:]
	}
	if len(b) != receiptMACLen || vals[2] == 0 || vals[2] > 1<<31 || vals[0] > maxReceiptNumber || vals[1] > maxReceiptNumber {
		return Receipt{}, false
	}
	return Receipt{Queue: vals[0], Seq: vals[1], Count: int(vals[2])}, true
}

// Open decodes a handle given for the queue numbered queue: it answers
// MissingParameter for an empty handle and ReceiptHandleIsInvalid for one
// that does not decode or names another queue.
func (c ReceiptCodec) Open(handle string, queue uint64) (Receipt, error) {
	if handle == "" {
		return Receipt{}, MissingParameter("ReceiptHandle")
	}
	r, ok := c.Decode(handle)
	if !ok || r.Queue != queue {
		return r, InvalidReceiptHandle(handle)
	}
	return r, nil
}

// macState is a keyed HMAC kept for reuse: hmac.New costs two allocations
// and two SHA-256 blocks of key setup, on every receive and delete.
type macState struct {
	key []byte
	h   hash.Hash
	sum [sha256.Size]byte
}

var macStates sync.Pool

// appendReceiptMAC appends the seal of a handle's fields to dst.
func appendReceiptMAC(dst, key, fields []byte) []byte {
	s, _ := macStates.Get().(*macState)
	if s == nil || !bytes.Equal(s.key, key) {
		s = &macState{key: key, h: hmac.New(sha256.New, key)}
	} else {
		s.h.Reset()
	}
	s.h.Write(fields)
	dst = append(dst, s.h.Sum(s.sum[:0])[:receiptMACLen]...)
	macStates.Put(s)
	return dst
}
