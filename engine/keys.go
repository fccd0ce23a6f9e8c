package engine

import (
	"encoding/binary"
	"time"
)

// Key layout of the store. Queue ids are never reused, so a deleted queue's
// records can be dropped with range deletes and a new queue of the same name
// starts clean.
//
//	n                      next queue id (8 bytes)
//	k                      receipt handle secret (32 bytes)
//	q/<name>               queue record (queueRecord, JSON)
//	c/<qid>                next sequence number of the queue (8 bytes)
//	m/<qid><seq>           message, immutable once written (messageRecord)
//	s/<qid><seq>           message state, rewritten on every receive (stateRecord)
//	w/<qid><expires><dedup key>  deduplication entry (dedupRecord), by
//	                       the end of its window (8-byte big-endian Unix
//	                       nanoseconds), so that a pass that ends many
//	                       windows deletes their records with one range
//	                       delete (queue.go, expireWindows)
//	d/<qid><dedup key>     deduplication entry as versions before w/ wrote
//	                       it: read at start-up, deleted when it ends,
//	                       never written
//	p/, p/<qid><lo>        the last checkpoint of the paged backlogs (checkpoint.go)
//	m/<0><0>               its canary (no queue has id 0)
//	g/<qid><len><group><seq>  FIFO group index: empty, one per message of a
//	                       FIFO queue of a paging engine (fifopage.go)
//
// <qid> and <seq> are 8-byte big-endian, so messages sort in send order.
const (
	prefixQueue   = "q/"
	prefixCounter = "c/"
	prefixMessage = "m/"
	prefixState   = "s/"
	prefixDedup   = "d/"
	prefixWindow  = "w/"
	prefixGroup   = "g/"
	keyNextQueue  = "n"
	// keyHandleSecret holds the random key that seals receipt handles; it
	// is kept so that handles stay valid across restarts.
	keyHandleSecret = "k"
)

func queueKey(name string) []byte { return append([]byte(prefixQueue), name...) }

func idKey(prefix string, qid uint64) []byte {
	k := make([]byte, len(prefix)+8, len(prefix)+16)
	copy(k, prefix)
	binary.BigEndian.PutUint64(k[len(prefix):], qid)
	return k
}

func seqKey(prefix string, qid, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefix, qid), seq)
}

func dedupKey(qid uint64, key string) []byte { return append(idKey(prefixDedup, qid), key...) }

// windowKey is the w/ key of the deduplication entry key of queue qid
// whose window ends at expires.
func windowKey(qid uint64, expires time.Time, key string) []byte {
	return append(windowBound(qid, expires), key...)
}

// windowBound is where the w/ keys of queue qid whose windows end at
// expires or later start: [idKey(prefixWindow, qid), windowBound(qid, t))
// holds the entries whose windows ended before t.
func windowBound(qid uint64, expires time.Time) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefixWindow, qid), uint64(expires.UnixNano()))
}

// endedWindows returns the bounds of the w/ keys of queue qid whose
// windows ended by t (to the nanosecond, t included).
func endedWindows(qid uint64, t time.Time) (start, end []byte) {
	return idKey(prefixWindow, qid), windowBound(qid, t.Add(time.Nanosecond))
}

// parseWindowKey splits a w/ key.
func parseWindowKey(k []byte) (qid uint64, expires time.Time, key string, ok bool) {
	n := len(prefixWindow)
	if len(k) < n+16 {
		return 0, time.Time{}, "", false
	}
	qid = binary.BigEndian.Uint64(k[n:])
	expires = time.Unix(0, int64(binary.BigEndian.Uint64(k[n+8:])))
	return qid, expires, string(k[n+16:]), true
}

// queueRange returns the bounds of every key under prefix for one queue.
func queueRange(prefix string, qid uint64) (start, end []byte) {
	return idKey(prefix, qid), idKey(prefix, qid+1)
}

// parseSeqKey splits m/ and s/ keys.
func parseSeqKey(prefix string, k []byte) (qid, seq uint64, ok bool) {
	if len(k) != len(prefix)+16 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(k[len(prefix):]), binary.BigEndian.Uint64(k[len(prefix)+8:]), true
}

func uint64Value(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// groupKey is the index key of message seq of FIFO group group in queue
// qid: the group's length (2 bytes, so that no group's keys are a prefix
// of another's) and the group sort the keys of one group together, in
// sequence order.
func groupKey(qid uint64, group string, seq uint64) []byte {
	k := make([]byte, 0, len(prefixGroup)+8+2+len(group)+8)
	k = append(k, prefixGroup...)
	k = binary.BigEndian.AppendUint64(k, qid)
	k = binary.BigEndian.AppendUint16(k, uint16(len(group)))
	k = append(k, group...)
	return binary.BigEndian.AppendUint64(k, seq)
}

// groupKeySeq returns the sequence of a group index key.
func groupKeySeq(k []byte) (uint64, bool) {
	if len(k) < len(prefixGroup)+8+2+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[len(k)-8:]), true
}
